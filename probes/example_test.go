package probes_test

import (
	"fmt"

	"github.com/leakbench/leakbench/probes"
)

// The incident's culprit: sessions left idle in transaction after the
// token-scoping lookup, each with its own user's address (the second cut
// at track_activity_query_size). Bind parameters stay; comments go.
func ExampleFingerprint() {
	fmt.Println(probes.Fingerprint(`SELECT team_id FROM email_team_members
  WHERE user_email = 'ann@example.com' AND role IN ('owner', 'member') -- scoping`))
	fmt.Println(probes.Fingerprint(`SELECT team_id FROM email_team_members WHERE user_email = 'bob@exa`))
	fmt.Println(probes.Fingerprint("SELECT 1 FROM email_team_members\n  WHERE user_email = 'alice@example.com' AND team_id IN (3, 4, 5)"))
	fmt.Println(probes.Fingerprint("UPDATE api_tokens SET last_used_at = now() WHERE id = $1 /* route=/mcp */"))
	// Output:
	// SELECT team_id FROM email_team_members WHERE user_email = ? AND role IN (?)
	// SELECT team_id FROM email_team_members WHERE user_email = ?
	// SELECT ? FROM email_team_members WHERE user_email = ? AND team_id IN (?)
	// UPDATE api_tokens SET last_used_at = now() WHERE id = $1
}

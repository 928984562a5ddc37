package probes_test

import (
	"fmt"

	"github.com/leakbench/leakbench/probes"
)

// The incident's culprit: sessions left idle in transaction after the
// token-scoping lookup, each with its own user's address.
func ExampleFingerprint() {
	fmt.Println(probes.Fingerprint(`SELECT team_id FROM email_team_members
  WHERE user_email = 'ann@example.com' AND role IN ('owner', 'member') -- scoping`))
	fmt.Println(probes.Fingerprint(`SELECT team_id FROM email_team_members WHERE user_email = 'bob@exa`))
	// Output:
	// SELECT team_id FROM email_team_members WHERE user_email = ? AND role IN (?)
	// SELECT team_id FROM email_team_members WHERE user_email = ?
}

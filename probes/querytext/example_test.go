package querytext_test

import (
	"fmt"

	"github.com/leakbench/leakbench/probes/querytext"
)

// The incident's culprit: sessions left idle in transaction after the
// token-scoping lookup, each with its own user's address (the second cut
// at track_activity_query_size). Bind parameters stay; comments go.
func ExampleFingerprint() {
	fmt.Println(querytext.Fingerprint(`SELECT team_id FROM email_team_members
  WHERE user_email = 'ann@example.com' AND role IN ('owner', 'member') -- scoping`))
	fmt.Println(querytext.Fingerprint(`SELECT team_id FROM email_team_members WHERE user_email = 'bob@exa`))
	fmt.Println(querytext.Fingerprint("SELECT 1 FROM email_team_members\n  WHERE user_email = 'alice@example.com' AND team_id IN (3, 4, 5)"))
	fmt.Println(querytext.Fingerprint("UPDATE api_tokens SET last_used_at = now() WHERE id = $1 /* route=/mcp */"))
	// Output:
	// SELECT team_id FROM email_team_members WHERE user_email = ? AND role IN (?)
	// SELECT team_id FROM email_team_members WHERE user_email = ?
	// SELECT ? FROM email_team_members WHERE user_email = ? AND team_id IN (?)
	// UPDATE api_tokens SET last_used_at = now() WHERE id = $1
}

// What episodes.jsonl and the summary keep of a statement with secrets in
// it: the literals masked, lists at their length, a cut text marked, and
// an ANSI escape defused.
func ExampleMask() {
	fmt.Println(querytext.Mask(`ALTER ROLE app PASSWORD 'hunter2'`))
	fmt.Println(querytext.Mask(`SELECT 1 FROM api_tokens WHERE token IN ('sk_live_1', 'sk_live_2') AND owner = 'ann@exa`))
	fmt.Println(querytext.Mask("SELECT 1 AS \"\x1b[2Jgone\""))
	// Output:
	// ALTER ROLE app PASSWORD ?
	// SELECT ? FROM api_tokens WHERE token IN (?, ?) AND owner = ?…
	// SELECT ? AS "�[2Jgone"
}

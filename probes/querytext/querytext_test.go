package querytext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fingerprintCases = []struct{ name, in, want string }{
	{"string and number", `SELECT * FROM t WHERE a = 'x' AND b = 42`, `SELECT * FROM t WHERE a = ? AND b = ?`},
	{"incident query", `SELECT email_team_members.team_id FROM email_team_members WHERE email_team_members.user_email = 'alice@example.com' AND email_team_members.is_active = true`,
		`SELECT email_team_members.team_id FROM email_team_members WHERE email_team_members.user_email = ? AND email_team_members.is_active = true`},
	{"doubled quote", `SELECT 'it''s', 'x'`, `SELECT ?, ?`},
	{"escape string", `SELECT E'a\'b' || e'\\' || 'c'`, `SELECT ? || ? || ?`},
	{"bit, hex and national strings", `SELECT B'0101', X'ff', N'n', U&'d\0061t'`, `SELECT ?, ?, ?, ?`},
	{"numbers", `SELECT 1.5e-3, .5, 0x1F, 1_000, 3e+2 FROM t1 WHERE col2 = 7`, `SELECT ?, ?, ?, ?, ? FROM t1 WHERE col2 = ?`},
	{"hex then minus is an operator", `SELECT 0x1e-1`, `SELECT ?-?`},
	{"negative number", `WHERE a = -1`, `WHERE a = -?`},
	{"casts", `SELECT '2024-01-01'::date, 1::int4, interval '1 day'`, `SELECT ?::date, ?::int4, interval ?`},
	{"IN list", `WHERE id IN (1, 2, 3)`, `WHERE id IN (?)`},
	{"IN list spacing", `WHERE id IN ( 'a' ,'b','c' )`, `WHERE id IN (?)`},
	{"IN list of one", `WHERE id IN (1)`, `WHERE id IN (?)`},
	{"array", `WHERE id = ANY(ARRAY[1,2,3])`, `WHERE id = ANY(ARRAY[?])`},
	{"mixed list kept", `VALUES (a, 1, 'x')`, `VALUES (a, ?, ?)`},
	{"nested lists", `WHERE (a, b) IN ((1, 2), (3, 4))`, `WHERE (a, b) IN ((?), (?))`},
	{"bind parameters kept", `SELECT 1 FROM t WHERE a = $1 AND b IN ($2, $3)`, `SELECT ? FROM t WHERE a = $1 AND b IN ($2, $3)`},
	{"dollar quotes", `SELECT $$it's$$, $fn$ body $$ $fn$, $1`, `SELECT ?, ?, $1`},
	{"identifiers with $", `SELECT a$b FROM "T$1"`, `SELECT a$b FROM "T$1"`},
	{"comments", "SELECT /* trace_id=abc /* nested */ */ 1 -- tail 'x'\nFROM t", `SELECT ? FROM t`},
	{"whitespace", "SELECT\n\t1 ,\r\n  2\n", `SELECT ?, ?`},
	{"quoted identifiers kept", `SELECT "Weird ""Name""", "a  b" FROM "T"`, `SELECT "Weird ""Name""", "a  b" FROM "T"`},
	{"jsonb ? operator", `SELECT data ? 'k' FROM t`, `SELECT data ? ? FROM t`},
	{"function call", `SELECT count(*), now() FROM t`, `SELECT count(*), now() FROM t`},
	{"empty", "", ""},
	{"comment only", "-- nothing", ""},
	// pg_stat_activity.query cut at track_activity_query_size.
	{"truncated in a string", `SELECT 1 FROM email_team_members WHERE user_email = 'alice@exa`, `SELECT ? FROM email_team_members WHERE user_email = ?`},
	{"truncated after an escape", `SELECT E'abc\`, `SELECT ?`},
	{"truncated on a doubled quote", `SELECT 'it''`, `SELECT ?`},
	{"truncated in a dollar quote", `SELECT $q$abc`, `SELECT ?`},
	{"truncated in a comment", `SELECT 1 /* abc`, `SELECT ?`},
	{"truncated in a quoted identifier", `SELECT "Col`, `SELECT "Col`},
	{"truncated in an IN list", `WHERE id IN (1, 2, 3`, `WHERE id IN (?, ?, ?`},
	{"truncated in a number", `LIMIT 12`, `LIMIT ?`},
	{"lone dollar", `SELECT $ 1, $a`, `SELECT $ ?, $a`},
	{"utf-8 identifier", `SELECT straße FROM t WHERE x = 'ü'`, `SELECT straße FROM t WHERE x = ?`},
	// Nothing that acts on a terminal or renderer survives.
	{"ANSI escape in an identifier", "SELECT \"a\x1b[31mred\" FROM t", "SELECT \"a\ufffd[31mred\" FROM t"},
	{"control in an identifier", "SELECT \"a\nb\x7f\u0085\" FROM t", "SELECT \"a\ufffdb\ufffd\ufffd\" FROM t"},
	{"bidi override", "SELECT x\u202e FROM t", "SELECT x\ufffd FROM t"},
	{"not UTF-8", "SELECT ab\xff FROM t", "SELECT ab\ufffd FROM t"},
	{"control replaced before lexing", "$A000\b$0", "?"},
}

var maskCases = []struct{ name, in, want string }{
	{"secrets", `SELECT 'sk_live_SECRET123', 'alice@example.com'`, `SELECT ?, ?`},
	{"password", `ALTER ROLE app PASSWORD 'hunter2'`, `ALTER ROLE app PASSWORD ?`},
	{"lists keep their length", `WHERE id IN (1, 2, 3) AND k = ANY(ARRAY['a','b'])`, `WHERE id IN (?, ?, ?) AND k = ANY(ARRAY[?, ?])`},
	{"comments dropped", "SELECT 1 /* traceparent='00-abc-01' */ -- token=x\nFROM t", `SELECT ? FROM t`},
	{"cut in a string", `SELECT 1 FROM users WHERE email = 'alice@exa`, `SELECT ? FROM users WHERE email = ?…`},
	{"cut in a comment", `SELECT 1 /* api_key=abc`, `SELECT ?…`},
	{"cut in a dollar quote", `SELECT $q$secret`, `SELECT ?…`},
	{"cut in a quoted identifier", `SELECT "Col`, `SELECT "Col…`},
	{"cut in an escape string", `SELECT E'abc\`, `SELECT ?…`},
	{"ANSI escape", "SELECT '\x1b[2J' AS \"\x1b]0;pwned\x07\"", "SELECT ? AS \"\ufffd]0;pwned\ufffd\""},
	{"bind parameters", `UPDATE t SET a = $1 WHERE id = $2`, `UPDATE t SET a = $1 WHERE id = $2`},
}

func TestMask(t *testing.T) {
	for _, c := range maskCases {
		t.Run(c.name, func(t *testing.T) {
			if got := Mask(c.in); got != c.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	for _, c := range fingerprintCases {
		t.Run(c.name, func(t *testing.T) {
			if got := Fingerprint(c.in); got != c.want {
				t.Errorf("Fingerprint(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestFingerprintGroupsValues(t *testing.T) {
	a := Fingerprint(`SELECT 1 FROM email_team_members WHERE user_email = 'a@x.org' AND team_id IN (1, 2)`)
	b := Fingerprint("SELECT 1  FROM email_team_members\nWHERE user_email = 'bob@y.org' AND team_id IN (7,8,9)")
	if a != b {
		t.Errorf("same statement, different values:\n%q\n%q", a, b)
	}
	if c := Fingerprint(`SELECT 1 FROM email_users WHERE email = 'a@x.org'`); c == a {
		t.Errorf("different statements share a fingerprint: %q", c)
	}
}

// checkFingerprint holds for any input: no panic, idempotent, valid UTF-8
// kept, and outside quoted identifiers no quote and no whitespace but
// single spaces between tokens.
func checkFingerprint(t *testing.T, in string) {
	out := Fingerprint(in)
	if again := Fingerprint(out); again != out {
		t.Fatalf("not idempotent for %q:\n once %q\ntwice %q", in, out, again)
	}
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
	}
	masked := Mask(in)
	if again := Mask(masked); again != masked {
		t.Fatalf("Mask not idempotent for %q:\n once %q\ntwice %q", in, masked, again)
	}
	if fp := Fingerprint(masked); fp != out {
		t.Fatalf("Fingerprint(Mask(%q)) = %q, want Fingerprint's %q", in, fp, out)
	}
	for _, s := range []string{out, masked} {
		for _, r := range s {
			if unsafeRune(r) {
				t.Fatalf("control %U survived in %q from %q", r, s, in)
			}
		}
	}
	if strings.Contains(out, `"`) {
		return
	}
	if strings.Contains(out, "'") || strings.Contains(masked, "'") {
		t.Fatalf("a quote survived in %q from %q", out, in)
	}
	if strings.ContainsAny(out, "\t\n\r\f\v") || strings.Contains(out, "  ") ||
		strings.HasPrefix(out, " ") || strings.HasSuffix(out, " ") {
		t.Fatalf("whitespace not collapsed in %q from %q", out, in)
	}
}

func FuzzFingerprint(f *testing.F) {
	for _, c := range fingerprintCases {
		f.Add(c.in)
	}
	for _, c := range maskCases {
		f.Add(c.in)
	}
	f.Fuzz(checkFingerprint)
}

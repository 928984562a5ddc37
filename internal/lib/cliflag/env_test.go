package cliflag

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestEnvDefaults: each typed flag takes its default from its variable
// when set (and its own default otherwise), names the variable in its
// help, shows a credential in a string default redacted, lets the command
// line override it, and a variable that does not parse as its type is a
// usage error naming it, the flag's own default kept.
func TestEnvDefaults(t *testing.T) {
	env := map[string]string{
		"S": "postgres://u:pw@db/x", "I": "7", "I64": "-9", "U64": "11", "F": "0.5", "D": "3s", "B": "true",
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := NewEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	s, i, i64 := e.String("s", "S", "", "a DSN"), e.Int("i", "I", 1, "n"), e.Int64("i64", "I64", 1, "n")
	u64, f, d, b := e.Uint64("u64", "U64", 1, "n"), e.Float64("f", "F", 1, "x"), e.Duration("d", "D", time.Second, "t"), e.Bool("b", "B", false, "on")
	unset := e.Int("unset", "UNSET", 42, "n")
	if err := fs.Parse([]string{"--i", "8"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	if *s != env["S"] || *i != 8 || *i64 != -9 || *u64 != 11 || *f != 0.5 || *d != 3*time.Second || !*b || *unset != 42 {
		t.Errorf("values %q %d %d %d %g %s %v %d; want the environment's, --i 8 from the command line, 42 unset",
			*s, *i, *i64, *u64, *f, *d, *b, *unset)
	}
	if u := fs.Lookup("d").Usage; !strings.HasSuffix(u, "(env D)") {
		t.Errorf("usage %q does not name the variable", u)
	}
	if def := fs.Lookup("s").DefValue; strings.Contains(def, "pw") {
		t.Errorf("help's default %q shows the password", def)
	}

	bad := map[string]string{"I": "seven", "D": "3 parsecs", "B": "perhaps", "U64": "-1"}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	e = NewEnv(fs, func(k string) (string, bool) { v, ok := bad[k]; return v, ok })
	i, d, b, u64 = e.Int("i", "I", 1, "n"), e.Duration("d", "D", time.Second, "t"), e.Bool("b", "B", false, "on"), e.Uint64("u64", "U64", 2, "n")
	err := e.Err()
	if !errors.Is(err, ErrUsage) || *i != 1 || *d != time.Second || *b || *u64 != 2 {
		t.Fatalf("bad variables: %v (values %d %s %v %d), want a usage error and the defaults kept", err, *i, *d, *b, *u64)
	}
	for _, want := range []string{`I="seven"`, `D="3 parsecs"`, `B="perhaps"`, `U64="-1"`} {
		if !strings.Contains(err.Error(), "environment variable "+want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

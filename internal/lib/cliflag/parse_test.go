package cliflag

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

// TestParseArgs: every subcommand reads its arguments one way — flags
// before, between or after the positional arguments, "--" ending the
// flags — and a subcommand without positional arguments refuses one.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		pos  []string
		out  string
	}{
		{"flags first", []string{"--out", "D", "A", "B"}, []string{"A", "B"}, "D"},
		{"flags last", []string{"A", "B", "--out", "D"}, []string{"A", "B"}, "D"},
		{"flags between", []string{"A", "--out=D", "B"}, []string{"A", "B"}, "D"},
		{"dash-dash", []string{"--out", "D", "--", "-A", "--out"}, []string{"-A", "--out"}, "D"},
		{"none", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			out := fs.String("out", "", "")
			pos, err := ParseArgs(fs, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, tc.pos) || *out != tc.out {
				t.Errorf("ParseArgs(%q) = %q, --out %q; want %q, %q", tc.args, pos, *out, tc.pos, tc.out)
			}
		})
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("out", "", "")
	if err := Parse(fs, []string{"--out", "D", "stray"}); !errors.Is(err, ErrUsage) {
		t.Errorf("Parse with a positional argument: %v, want a usage error", err)
	}
	if _, err := ParseArgs(fs, []string{"A", "--nope"}); !errors.Is(err, ErrUsage) {
		t.Errorf("an unknown flag after a positional argument: %v, want a usage error", err)
	}
}

// TestClosest: a typo is one or two edits away; an unrelated word is not.
func TestClosest(t *testing.T) {
	names := []string{"target", "tokens-file", "probe-dsn", "before-target"}
	for in, want := range map[string]string{"tagret": "target", "probe-dns": "probe-dsn", "tokens": "tokens-file", "zzz": "", "x": ""} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}

package main

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
			pos, err := parseArgs(fs, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, tc.pos) || *out != tc.out {
				t.Errorf("parseArgs(%q) = %q, --out %q; want %q, %q", tc.args, pos, *out, tc.pos, tc.out)
			}
		})
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("out", "", "")
	if err := parseFlags(fs, []string{"--out", "D", "stray"}); !errors.Is(err, errUsage) {
		t.Errorf("parseFlags with a positional argument: %v, want a usage error", err)
	}
	if _, err := parseArgs(fs, []string{"A", "--nope"}); !errors.Is(err, errUsage) {
		t.Errorf("an unknown flag after a positional argument: %v, want a usage error", err)
	}
}

package main

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestSoakSettings: a profile's soak: section sets the soak's settings,
// a flag the user gave wins over it, what neither sets takes the flags'
// defaults; a slope for a kind that does not exist is a usage error.
func TestSoakSettings(t *testing.T) {
	p, err := profiles.Parse([]byte("soak:\n  warmup: 45s\n  cool_down: 20s\n  slopes: {connections: 12}\nscenarios:\n  s: {executor: constant-vus, vus: 1, duration: 1m, flow: [tools/list]}\n"), "soak.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (*flag.FlagSet, soakFlags) {
		fs := flag.NewFlagSet("soak", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := soakFlags{fs.Duration("baseline", 10*time.Second, ""), fs.Duration("warmup", 30*time.Second, ""), fs.Duration("cool-down", 30*time.Second, ""),
			fs.Int("min-points", 30, ""), fs.Float64("min-r2", 0.5, ""), slopeFlags{}}
		fs.Var(f.slopes, "slope", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs, f
	}
	fs, f := parse()
	set, err := soakSettings(fs, p.Soak, f)
	if err != nil || set.Warmup != 45*time.Second || set.CoolDown != 20*time.Second || set.Baseline != 10*time.Second || set.Slopes["connections"] != 12 {
		t.Errorf("the profile's section: %+v, %v", set, err)
	}
	fs, f = parse("--warmup", "5s", "--slope", "stuck=3")
	set, err = soakSettings(fs, p.Soak, f)
	if err != nil || set.Warmup != 5*time.Second || set.CoolDown != 20*time.Second || set.Slopes["stuck"] != 3 || set.Slopes["connections"] != 12 {
		t.Errorf("flags over the profile: %+v, %v", set, err)
	}
	fs, f = parse("--slope", "conections=3")
	if _, err := soakSettings(fs, p.Soak, f); !errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("a misspelt slope kind: %v, want a usage error", err)
	}
}

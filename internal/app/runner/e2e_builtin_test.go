//go:build e2e

package runner

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// The end-to-end sign-offs (make e2e, make e2e-long): every built-in
// profile played once, for real, on local stacks. TestE2EPatternProfiles
// plays those of --profile all; the two here play the others — faults
// (about 70 s) in make e2e, the incident's rescaled 3,000 users (about 8
// minutes) in make e2e-long. TestE2EEveryProfileCovered keeps the list
// whole: a new built-in profile fails it until one of them plays it.

// e2eOutsideAll are the built-in profiles outside --profile all and the
// test that signs each off.
var e2eOutsideAll = map[string]string{"faults": "TestE2EFaultsProfile", "incident": "TestE2ELongIncidentProfile", "capacity": "TestE2ELongCapacityProfile (internal/app/capacity, make e2e-long)",
	"soak": "TestE2ELongSoakProfile (internal/app/soak, make e2e-long)"}

func TestE2EEveryProfileCovered(t *testing.T) {
	for _, n := range profiles.Names() {
		if _, ok := e2eOutsideAll[n]; !ok && !slices.Contains(AllPatterns, n) {
			t.Errorf("built-in profile %s is signed off by no e2e test", n)
		}
	}
}

func TestE2EFaultsProfile(t *testing.T) {
	// Beside the package's other e2e sign-offs: each plays 20–60 users
	// for 20–30 s and mostly waits on the clock. The CPU-bound accuracy
	// check (capacity's Little's law) is another package, which make
	// e2e's -p 1 keeps apart.
	t.Parallel()
	signoffBuiltin(t, "faults", 5*time.Minute)
}

// TestE2ELongIncidentProfile also fails when either side's generator did
// not keep up: a sign-off whose generator could not keep to its schedule
// measured leakbench's own delay as much as the gateway's (#40), and its
// pass is not evidence. (faults is not held to it: its restarts and
// stops make seconds the engine waits on nothing.)
func TestE2ELongIncidentProfile(t *testing.T) {
	c := signoffBuiltin(t, "incident", 15*time.Minute)
	for side, s := range map[string]*rundir.Summary{"before": c.Before, "after": c.After} {
		var g *rundir.Generator
		if s != nil && s.Load != nil {
			g = s.Load.Generator
		}
		if !g.KeptUp() {
			t.Errorf("%s: the generator did not keep up: %s", side, g.Line())
		}
	}
}

// signoffBuiltin signs off the built-in profile name: it must pass and its
// before run must leak, with the leaked sessions killed by the timeout.
// It returns the comparison, for a test's own checks.
func signoffBuiltin(t *testing.T, name string, limit time.Duration) *reports.Comparison {
	p, err := profiles.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	c, err := Signoff(ctx, SignoffOptions{Profile: p, Out: t.TempDir(), Version: "test", Env: "local"})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("sign-off: %v", err)
	}
	b, a := c.Before.Probe, c.After.Probe
	t.Logf("%s in %s — before: %d stuck (max %d at once), %d killed; after: %d stuck, release p99 %.2fs",
		name, time.Since(start).Round(time.Second), b.StuckEpisodes, b.MaxStuckIdleInTx, b.TimeoutTerminated, a.StuckEpisodes, a.ReleaseP99Seconds)
	for _, ch := range c.Checks {
		if !ch.Pass {
			t.Errorf("check failed: %s — %s", ch.Name, ch.Detail)
		}
	}
	if !c.Pass || b.StuckEpisodes == 0 || b.TimeoutTerminated == 0 {
		t.Errorf("before did not leak and get killed by the timeout, or the sign-off failed (pass %v)", c.Pass)
	}
	return c
}

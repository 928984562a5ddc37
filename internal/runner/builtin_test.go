package runner

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestRemainingBuiltinSignoffs signs off, for real on local stacks, the
// built-in profiles that --profile all does not cover (TestBuiltinProfile-
// Signoffs plays those): the incident's rescaled 3,000 users and the faults
// profile. Each must pass and its before run must show the leak; together
// with the other test, every built-in profile's sign-off runs in make test.
func TestRemainingBuiltinSignoffs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: the incident profile alone takes about 8 minutes")
	}
	var names []string
	for _, n := range profiles.Names() {
		if !slices.Contains(AllPatterns, n) {
			names = append(names, n)
		}
	}
	if !slices.Contains(names, "incident") || !slices.Contains(names, "faults") {
		t.Fatalf("built-in profiles outside --profile all: %v; want incident and faults among them", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := LookupProfile(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
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
		})
	}
}

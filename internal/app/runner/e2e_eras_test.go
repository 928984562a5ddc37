//go:build e2e

package runner

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestE2ECIProfileIn2025Era signs off the ci profile with its users pinned to
// the 2025 handshake (protocolVersion: negotiate) — the era clients before
// 2026-07-28 speak, with sessions — beside TestE2EPatternProfiles,
// which plays it in the profile's own 2026-07-28 (auto): the leak and its
// fix must show in both eras, and the summary must say which was spoken.
func TestE2ECIProfileIn2025Era(t *testing.T) {
	t.Parallel() // beside the other e2e sign-offs: see TestE2EFaultsProfile
	p, err := profiles.Lookup("ci")
	if err != nil {
		t.Fatal(err)
	}
	pinned := *p.Plan
	pinned.ProtocolVersion = plan.NegotiateVersion
	pinned.Scenarios = slices.Clone(pinned.Scenarios)
	for i := range pinned.Scenarios {
		pinned.Scenarios[i].ProtocolVersion = ""
	}
	p.Plan = &pinned
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, err := Signoff(ctx, SignoffOptions{Profile: p, Out: t.TempDir(), Version: "test", Env: "local"})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("sign-off: %v", err)
	}
	for _, ch := range c.Checks {
		if !ch.Pass {
			t.Errorf("check failed: %s — %s", ch.Name, ch.Detail)
		}
	}
	b := c.Before.Probe
	if !c.Pass || b.StuckEpisodes == 0 || b.TimeoutTerminated == 0 {
		t.Errorf("2025 era: before did not leak, or the sign-off failed (pass %v, %d stuck, %d killed)", c.Pass, b.StuckEpisodes, b.TimeoutTerminated)
	}
	for name, s := range map[string]map[string]int64{"before": c.Before.Load.Protocol, "after": c.After.Load.Protocol} {
		versions := slices.Collect(maps.Keys(s))
		if len(versions) == 0 || slices.ContainsFunc(versions, func(v string) bool { return !strings.HasPrefix(v, "2025-") }) {
			t.Errorf("%s spoke %v, want 2025 revisions only", name, s)
		}
	}
	t.Logf("2025 era: before %d stuck (%d killed), after %d stuck; spoke %v", b.StuckEpisodes, b.TimeoutTerminated, c.After.Probe.StuckEpisodes, c.Before.Load.Protocol)
}

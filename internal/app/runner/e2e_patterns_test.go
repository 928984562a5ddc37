//go:build e2e

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestE2EPatternProfiles signs off every pattern with its real
// built-in profile on local stacks, the way `leakbench signoff --profile
// all --env local` does (SignoffAll): one subtest per profile asserts its
// verdict passed and its before run showed that pattern's signature, then
// the combined report is checked. About 4–5 minutes on a 2-core machine;
// LEAKBENCH_TEST_PATTERNS=waiting,outside signs off only those.
func TestE2EPatternProfiles(t *testing.T) {
	t.Parallel() // beside the other e2e sign-offs: see TestE2EFaultsProfile
	all, err := AllProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range AllPatterns {
		if patternSignatures[name] == nil {
			t.Errorf("built-in pattern %s has no signature test", name)
		}
	}
	if only := os.Getenv("LEAKBENCH_TEST_PATTERNS"); only != "" {
		keep := strings.Split(only, ",")
		all = slices.DeleteFunc(all, func(p profiles.Profile) bool { return !slices.Contains(keep, p.Name) })
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(all))*3*time.Minute)
	defer cancel()
	start := time.Now()
	m, err := SignoffAll(ctx, SignoffAllOptions{SignoffOptions: SignoffOptions{Out: out, Version: "test", Env: "local"}, Profiles: all})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("sign-off of every pattern: %v", err)
	}
	t.Logf("all %d patterns took %s", len(all), time.Since(start).Round(time.Second))
	if len(m.Patterns) != len(all) {
		t.Fatalf("%d patterns signed off, want %d", len(m.Patterns), len(all))
	}
	for _, p := range m.Patterns {
		t.Run(p.Name, func(t *testing.T) {
			c := p.Comparison
			if p.Error != "" || c == nil {
				t.Fatalf("could not be done: %s", p.Error)
			}
			b, a := c.Before.Probe, c.After.Probe
			t.Logf("%s in %.0fs — before (%s): %d stuck episodes (max %d at once), %d killed, release p99 %.2fs, pool %.0f/%.0f at max %.1fs, %.0f waits; after (%s): %d stuck, %d killed, release p99 %.2fs, pool at max %.1fs",
				p.Name, p.DurationSeconds, p.VariantBefore, b.StuckEpisodes, b.MaxStuckIdleInTx, b.TimeoutTerminated, b.ReleaseP99Seconds,
				b.AppPoolMaxAcquired, b.AppPoolMax, b.AppPoolSaturatedSeconds, b.AppPoolAcquireWaits,
				p.VariantAfter, a.StuckEpisodes, a.TimeoutTerminated, a.ReleaseP99Seconds, a.AppPoolSaturatedSeconds)
			for _, ch := range c.Checks {
				if !ch.Pass {
					t.Errorf("check failed: %s — %s", ch.Name, ch.Detail)
				}
			}
			if !p.Pass || a.StuckEpisodes != 0 || a.MaxStuckIdleInTx != 0 {
				t.Errorf("sign-off did not pass (after: %d stuck episodes)", a.StuckEpisodes)
			}
			patternSignatures[p.Name](t, c, filepath.Join(out, p.Dir))
			for _, f := range []string{"compare.json", "report.md", "report.html", "before/summary.json", "after/summary.json"} {
				if st, err := os.Stat(filepath.Join(out, p.Dir, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s/%s missing or empty: %v", p.Dir, f, err)
				}
			}
		})
	}
	if !m.Pass || len(m.Failed) != 0 {
		t.Errorf("combined verdict: pass %v, failed %v", m.Pass, m.Failed)
	}
	var back reports.MultiSignoff
	raw, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil || json.Unmarshal(raw, &back) != nil || back.Kind != reports.MultiKind || len(back.Patterns) != len(all) || !back.Pass {
		t.Errorf("combined compare.json: %v, %+v", err, back)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, p := range all {
		if !strings.Contains(string(md), "\n## "+p.Name+"\n") {
			t.Errorf("combined report.md has no section for %s", p.Name)
		}
	}
	for _, f := range []string{"report.html", "junit.xml"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("combined %s missing or empty: %v", f, err)
		}
	}
}

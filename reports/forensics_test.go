package reports

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestLeakOrSlowRelease is the incident sign-off that failed on a 2-core
// machine: after (the fixed gateway, saturated at 3,000 users) had one
// episode of 2.1 s, released by the gateway itself, against a 2 s stuck
// threshold. That is held, not leaked: the sign-off passes, and says
// so. A session nobody released fails it, however short the rest.
func TestLeakOrSlowRelease(t *testing.T) {
	run := func(f rundir.Forensics, p99 float64) *rundir.Summary {
		return &rundir.Summary{EndReason: rundir.EndCompleted, Load: &rundir.LoadResult{},
			Probe:     &rundir.ProbeSummary{StuckEpisodes: f.StuckEpisodes, StuckAfterSeconds: 2, ReleaseP99Seconds: p99, LongestHoldSeconds: 2.1},
			Forensics: &f}
	}
	before := run(rundir.Forensics{StuckEpisodes: 120, Leaked: 120, LeakedByReason: map[string]int{"timeout": 120}, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2}, 120)
	slow := run(rundir.Forensics{StuckEpisodes: 1, SlowReleases: 1, SlowReleaseMaxSeconds: 2.1, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2,
		Saturated: true, SaturatedReason: "service pool at its max (60/60) for 4.0 s; request latency p95 8.8 s"}, 0.343)
	c := Compare(before, slow, "before", "after")
	if !c.Pass {
		t.Fatalf("a slow release failed the sign-off: %+v", c.Checks)
	}
	var detail string
	for _, ch := range c.Checks {
		if ch.Name == "after releases promptly" {
			detail = ch.Detail
		}
	}
	for _, want := range []string{"held, not leaked", "the run was saturated", "p95 8.8 s", "2.1 s"} {
		if !strings.Contains(detail, want) {
			t.Errorf("release check %q lacks %q", detail, want)
		}
	}
	for _, tc := range []struct {
		name  string
		after *rundir.Summary
	}{
		{"a leak", run(rundir.Forensics{StuckEpisodes: 1, Leaked: 1, LeakedByReason: map[string]int{"terminated": 1}, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2}, 0.1)},
		{"releases slow in bulk", run(rundir.Forensics{StuckEpisodes: 50, SlowReleases: 50, SlowReleaseMaxSeconds: 3, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2}, 2.5)},
	} {
		if c := Compare(before, tc.after, "before", "after"); c.Pass {
			t.Errorf("%s passed the sign-off: %+v", tc.name, c.Checks)
		}
	}
}

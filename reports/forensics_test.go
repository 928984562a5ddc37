package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestLeakOrSlowRelease is the incident sign-off that failed on a 2-core
// machine: after (the fixed gateway, saturated at 3,000 users) had one
// episode of 2.1 s, released by the gateway itself, against a 2 s stuck
// threshold. That is held, not leaked: the sign-off passes, and says
// so. A session nobody released fails it, however short the rest.
func TestLeakOrSlowRelease(t *testing.T) {
	run := func(f rundir.Forensics, p99 float64) *Summary {
		return &Summary{EndReason: EndCompleted, Load: &rundir.LoadResult{},
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
		after *Summary
	}{
		{"a leak", run(rundir.Forensics{StuckEpisodes: 1, Leaked: 1, LeakedByReason: map[string]int{"terminated": 1}, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2}, 0.1)},
		{"releases slow in bulk", run(rundir.Forensics{StuckEpisodes: 50, SlowReleases: 50, SlowReleaseMaxSeconds: 3, StuckAfterSeconds: 2, ReleaseLimitSeconds: 2}, 2.5)},
	} {
		if c := Compare(before, tc.after, "before", "after"); c.Pass {
			t.Errorf("%s passed the sign-off: %+v", tc.name, c.Checks)
		}
	}
}

// TestCitation: the verdict cites the requests that left most stuck
// sessions and what the client did, and the first one when it was of
// another kind; the after checks tell leaked sessions from ones released
// late. The forensics are those of package forensics' TestJoin.
func TestCitation(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	first := &rundir.WorstEpisode{PID: 100, Start: t0, HoldSeconds: 5, EndReason: rundir.EndTimeout,
		Request: &rundir.EpisodeRequest{Method: "tools/call", Name: "generate_report", Started: t0, Ended: t0.Add(900 * time.Millisecond), Outcome: "aborted"}}
	s := &Summary{Probe: &rundir.ProbeSummary{StuckAfterSeconds: 2, ReleaseP99Seconds: 0.3}, Forensics: &Forensics{
		StuckAfterSeconds: 2, ReleaseLimitSeconds: 2, StuckEpisodes: 10, Leaked: 9, LeakedByReason: map[string]int{"timeout": 9},
		SlowReleases: 1, SlowReleaseMaxSeconds: 2.5, Traced: 10, Joined: 9, JoinedShare: 0.9, RequestsIndexed: true, First: first,
		ByRequest: []rundir.RequestGroup{
			{Method: "tools/call", Name: "generate_report", Outcome: "aborted", Episodes: 8, TotalHoldSeconds: 40, MaxHoldSeconds: 5, MeanRequestSeconds: 0.9},
			{Method: "(not joined)", Outcome: "unknown", Episodes: 1, TotalHoldSeconds: 5, MaxHoldSeconds: 5},
			{Method: "tools/call", Name: "get_team_tools", Outcome: "ok", Episodes: 1, TotalHoldSeconds: 2.5, MaxHoldSeconds: 2.5, MeanRequestSeconds: 0.1},
		}}}
	want := "left by tools/call generate_report requests the client abandoned after 900 ms (8 of 10 stuck; 90% joined)"
	if got := requestCitation(s); got != want {
		t.Errorf("citation %q\nwant     %q", got, want)
	}
	first.Request.Name, first.Request.Outcome = "get_team_tools", "ok"
	want = "the first left by a tools/call get_team_tools request that succeeded after 900 ms; most " + want
	if got := requestCitation(s); got != want {
		t.Errorf("citation %q\nwant     %q", got, want)
	}
	if c := leakCheck(s); c.Pass || !strings.Contains(c.Detail, "9 leaked") {
		t.Errorf("leak check %+v", c)
	}
	s.Forensics.Leaked = 0 // as an after run with only the slow release
	if c := releaseCheck(s); !c.Pass || !strings.Contains(c.Detail, "held, not leaked") {
		t.Errorf("release check %+v", c)
	}
}

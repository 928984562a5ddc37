package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/forensics"
)

// TestCitation: the verdict cites the requests that left most stuck
// sessions and what the client did, and the first one when it was of
// another kind; the after checks tell leaked sessions from ones released
// late. The forensics are those of package forensics' TestJoin.
func TestCitation(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	first := &rundir.WorstEpisode{PID: 100, Start: t0, HoldSeconds: 5, EndReason: rundir.EndTimeout,
		Request: &rundir.EpisodeRequest{Method: "tools/call", Name: "generate_report", Started: t0, Ended: t0.Add(900 * time.Millisecond), Outcome: "aborted"}}
	s := &rundir.Summary{Probe: &rundir.ProbeSummary{StuckAfterSeconds: 2, ReleaseP99Seconds: 0.3}, Forensics: &rundir.Forensics{
		StuckAfterSeconds: 2, ReleaseLimitSeconds: 2, StuckEpisodes: 10, Leaked: 9, LeakedByReason: map[string]int{"timeout": 9},
		SlowReleases: 1, SlowReleaseMaxSeconds: 2.5, Traced: 10, Joined: 9, JoinedShare: 0.9, RequestsIndexed: true, First: first,
		ByRequest: []rundir.RequestGroup{
			{Method: "tools/call", Name: "generate_report", Outcome: "aborted", Episodes: 8, TotalHoldSeconds: 40, MaxHoldSeconds: 5, MeanRequestSeconds: 0.9},
			{Method: "(not joined)", Outcome: "unknown", Episodes: 1, TotalHoldSeconds: 5, MaxHoldSeconds: 5},
			{Method: "tools/call", Name: "get_team_tools", Outcome: "ok", Episodes: 1, TotalHoldSeconds: 2.5, MaxHoldSeconds: 2.5, MeanRequestSeconds: 0.1},
		}}}
	want := "left by tools/call generate_report requests the client abandoned after 900 ms (8 of 10 stuck; 90% joined)"
	if got := forensics.Citation(s.Forensics); got != want {
		t.Errorf("citation %q\nwant     %q", got, want)
	}
	first.Request.Name, first.Request.Outcome = "get_team_tools", "ok"
	want = "the first left by a tools/call get_team_tools request that succeeded after 900 ms; most " + want
	if got := forensics.Citation(s.Forensics); got != want {
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

// TestReleaseMargin: a passing release check says how far its p99 stayed
// below the limit; a failing or unmeasured one says no margin.
func TestReleaseMargin(t *testing.T) {
	for _, tt := range []struct {
		p99, limit float64
		want       string
	}{
		{0.272, 2, ": 1.7 s of margin, 7.4× the p99"},
		{1.9, 2, ": 100 ms of margin, 1.1× the p99"},
		{2, 2, ""},
		{2.2, 2, ""},
		{0, 2, ""},
	} {
		if got := releaseMargin(tt.p99, tt.limit); got != tt.want {
			t.Errorf("releaseMargin(%v, %v) = %q, want %q", tt.p99, tt.limit, got, tt.want)
		}
	}
}

package derive

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// appSeries is samples every 100 ms of one application "svc": total[i]
// backends, active[i] of them active, the rest idle in transaction when
// iit, else idle; changed[i] is how long before the sample its latest
// state change was.
func appSeries(t0 time.Time, total, active []int, iit bool, changed []time.Duration) []rundir.Sample {
	out := make([]rundir.Sample, len(total))
	for i := range out {
		now := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		a := rundir.AppConns{Name: "svc", LastStateChange: now.Add(-changed[i])}
		a.Active = active[i]
		if iit {
			a.IdleInTx = total[i] - active[i]
		} else {
			a.Idle = total[i] - active[i]
		}
		out[i] = rundir.Sample{Time: now, Apps: []rundir.AppConns{a}}
	}
	return out
}

func fill(v, n int) []int { return repeat(v, n) }

func durs(d time.Duration, n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = d
	}
	return s
}

// growing is how long before each sample the latest state change was when
// nothing happens after t0: it grows with the samples.
func growing(n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = time.Duration(i) * 100 * time.Millisecond
	}
	return s
}

func TestServicesPinned(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	load := &rundir.LoadResult{Started: t0, Ended: t0.Add(10 * time.Second)}
	// Requests failing every second of the load.
	var failing []rundir.LoadPoint
	for i := 1; i <= 10; i++ {
		failing = append(failing, rundir.LoadPoint{Time: t0.Add(time.Duration(i) * time.Second), Requests: 10, Failures: 3})
	}
	worked := append([]int{2}, fill(0, 30)...) // active at the first sample, then nothing
	tests := []struct {
		name        string
		samples     []rundir.Sample
		load        []rundir.LoadPoint
		pinned      bool
		seconds     float64 // ±0.15
		allIIT      bool
		reasonMatch string
	}{
		// 10 held in transactions for 3 s, nothing run meanwhile.
		{"held in transactions", appSeries(t0, fill(10, 31), fill(0, 31), true, growing(31)), nil, true, 3.0, true,
			"svc's connections pinned at 10 for 3.0 s (all idle in transaction"},
		// Held outside transactions while requests fail: pinned too, but
		// not "idle in transaction".
		{"held idle, requests failing", appSeries(t0, fill(10, 31), worked, false, growing(31)), failing, true, 2.9, false, "none working"},
		// Idle outside transactions, nothing failing: it hurt no one.
		{"idle, nothing failing", appSeries(t0, fill(10, 31), worked, false, growing(31)), nil, false, 0, false, ""},
		// Never seen working (a tool's idle session): never pinned.
		{"never worked", appSeries(t0, fill(10, 31), fill(0, 31), false, growing(31)), failing, false, 0, false, ""},
		// A busy healthy pool at its max: statements keep flipping states,
		// so its latest change is always recent, and some are active.
		{"busy pool", appSeries(t0, fill(10, 31), append(fill(0, 15), fill(2, 16)...), false, durs(5*time.Millisecond, 31)), failing, false, 0, false, ""},
		// Idle at its max with quick queries between samples: not pinned.
		{"quick queries", appSeries(t0, fill(10, 31), worked, false, durs(30*time.Millisecond, 31)), failing, false, 0, false, ""},
		// Shorter than the stuck threshold (1 s).
		{"brief", appSeries(t0, fill(10, 8), fill(0, 8), true, growing(8)), nil, false, 0, false, ""},
		// Pinned at 5, then it grew to 10 and worked: 5 was not its max.
		{"below its max", appSeries(t0, append(fill(5, 20), fill(10, 5)...), append(fill(0, 20), fill(3, 5)...), true, append(growing(20), durs(0, 5)...)), nil, false, 0, false, ""},
		// After the load ended: a pool left at its size is not pinned.
		{"after the load", appSeries(t0.Add(11*time.Second), fill(10, 31), fill(0, 31), true, growing(31)), nil, false, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &rundir.Summary{Probe: &rundir.ProbeSummary{StuckAfterSeconds: 1}, Load: load}
			p := PoolState(s, tt.samples, tt.load, 0.1)
			if len(p.Services) != 1 {
				t.Fatalf("services %+v, want svc alone", p.Services)
			}
			c := p.Services[0]
			if c.Pinned != tt.pinned || p.Pinned != tt.pinned || c.Max != 10 && tt.name != "brief" {
				t.Fatalf("pinned %v (pool %v), max %d; want pinned %v, max 10: %+v", c.Pinned, p.Pinned, c.Max, tt.pinned, c)
			}
			if d := c.PinnedSeconds - tt.seconds; d > 0.15 || d < -0.15 {
				t.Errorf("pinned %.2f s, want %.1f", c.PinnedSeconds, tt.seconds)
			}
			if tt.pinned && c.PinnedAllIdleInTx != tt.allIIT {
				t.Errorf("all idle in transaction %v, want %v", c.PinnedAllIdleInTx, tt.allIIT)
			}
			// Neither PgBouncer nor pool metrics: the database view judges.
			if p.Exhausted != tt.pinned || tt.pinned && (p.JudgedFrom != "database view" || !strings.Contains(p.Reason, tt.reasonMatch) || !strings.Contains(p.Reason, "judged from the database's view")) {
				t.Errorf("exhausted %v from %q: %q; want %v, from the database view, saying %q", p.Exhausted, p.JudgedFrom, p.Reason, tt.pinned, tt.reasonMatch)
			}
		})
	}
}

// TestServicesPinnedCountsFailures: the requests that ended while the
// service was pinned, and how many failed, come from load.jsonl's seconds.
func TestServicesPinnedCountsFailures(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := &rundir.Summary{Probe: &rundir.ProbeSummary{StuckAfterSeconds: 1}, Load: &rundir.LoadResult{Started: t0, Ended: t0.Add(10 * time.Second)}}
	var load []rundir.LoadPoint
	for i := 1; i <= 10; i++ {
		load = append(load, rundir.LoadPoint{Time: t0.Add(time.Duration(i) * time.Second), Requests: 10, Failures: int64(i % 2 * 4)})
	}
	// Pinned from t0 to t0+3 s: the seconds ending at 1, 2 and 3 s.
	p := PoolState(s, appSeries(t0, fill(10, 31), fill(0, 31), true, growing(31)), load, 0.1)
	c := p.Services[0]
	if c.RequestsWhilePinned != 30 || c.FailuresWhilePinned != 8 || !strings.Contains(PinnedPhrase(&c), "8 of 30 requests failed meanwhile") {
		t.Errorf("%d requests, %d failed while pinned (%s); want 30 and 8", c.RequestsWhilePinned, c.FailuresWhilePinned, PinnedPhrase(&c))
	}
	// Pinned twice, let go for one sample between (0.8 s and 1.2 s of
	// the same second of load.jsonl): that second counts once, and the
	// counts stay within the run's (100 requests, 20 failed).
	total, active := fill(10, 31), fill(0, 31)
	total[12] = 9 // one sample below the max: two spans, 0–1.1 s and 1.3–3 s
	changed := growing(31)
	for i := 13; i < 31; i++ {
		changed[i] = time.Duration(i-13) * 100 * time.Millisecond
	}
	c = PoolState(s, appSeries(t0, total, active, true, changed), load, 0.1).Services[0]
	if c.PinnedSpans != 2 || c.RequestsWhilePinned != 30 || c.FailuresWhilePinned != 8 {
		t.Errorf("two spans sharing a second: %d spans, %d requests, %d failed while pinned; want 2, 30 and 8", c.PinnedSpans, c.RequestsWhilePinned, c.FailuresWhilePinned)
	}
	// With PgBouncer sampled, the database view does not decide exhaustion
	// (PgBouncer's evidence does), but the pinned fact stays.
	samples := appSeries(t0, fill(10, 31), fill(0, 31), true, growing(31))
	for i := range samples {
		samples[i].PgBouncer = &rundir.PoolSample{}
	}
	if p := PoolState(s, samples, load, 0.1); p.Exhausted || !p.Pinned {
		t.Errorf("with PgBouncer healthy: exhausted %v (%s), pinned %v; want not exhausted, pinned", p.Exhausted, p.Reason, p.Pinned)
	}
}

// TestServicesBusyAtMax: a pool at its maximum with every backend busy —
// the reference gateway's 10 of 10, all working — is counted, at its
// final maximum only and within the load.
func TestServicesBusyAtMax(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := &rundir.Summary{Probe: &rundir.ProbeSummary{StuckAfterSeconds: 1}, Load: &rundir.LoadResult{Started: t0, Ended: t0.Add(3 * time.Second)}}
	for _, tc := range []struct {
		name    string
		samples []rundir.Sample
		share   float64
		seconds float64
	}{
		// 31 samples at 10, 6 active and 4 idle in transaction: all busy.
		{"saturated", appSeries(t0, fill(10, 31), fill(6, 31), true, durs(0, 31)), 1, 3.0},
		// 10 backends, 6 active, 4 idle outside a transaction: room.
		{"room", appSeries(t0, fill(10, 31), fill(6, 31), false, durs(0, 31)), 0, 0},
		// Busy at 5 for 2 s, then 10 with room: 5 was not its maximum.
		{"below its max", appSeries(t0, append(fill(5, 21), fill(10, 10)...), append(fill(5, 21), fill(2, 10)...), false, durs(0, 31)), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := PoolState(s, tc.samples, nil, 0.1).Services[0]
			if math.Abs(c.BusyAtMaxShare-tc.share) > 0.01 || math.Abs(c.BusyAtMaxSeconds-tc.seconds) > 0.15 {
				t.Errorf("busy at max %.2f of the load, %.2f s; want %.2f, %.1f s", c.BusyAtMaxShare, c.BusyAtMaxSeconds, tc.share, tc.seconds)
			}
		})
	}
}

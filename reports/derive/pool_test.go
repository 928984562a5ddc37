package derive

import (
	"math"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// series builds samples every step; waiting[i] is PgBouncer's cl_waiting
// and acquired[i] the service pool's (max 10) — nil slices leave the
// source out.
func series(step time.Duration, waiting, acquired []int) []rundir.Sample {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := max(len(waiting), len(acquired))
	out := make([]rundir.Sample, n)
	for i := range out {
		out[i].Time = t0.Add(time.Duration(i) * step)
		if waiting != nil {
			out[i].PgBouncer = &rundir.PoolSample{ClWaiting: waiting[i], MaxWaitSeconds: 0.01 * float64(waiting[i])}
		}
		if acquired != nil {
			out[i].AppPool = &rundir.AppPoolSample{Acquired: float64(acquired[i]), Max: 10, AcquireWaitsTotal: float64(i)}
		}
	}
	return out
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestPoolState pins PoolState's verdict and the numbers behind it: the
// exact reason (empty when the pool was healthy: nothing else in the
// report says "healthy"), the worst PgBouncer wait and the spells that
// decide it, so that a spell measured too short or too long, or a reason
// naming the wrong source, fails here.
func TestPoolState(t *testing.T) {
	ms := 100 * time.Millisecond
	tests := []struct {
		name      string
		samples   []rundir.Sample
		reason    string
		worst     float64 // the largest MaxWaitSeconds, 0.01 s per client queued in series
		waiting   float64 // the longest spell with PgBouncer clients queued
		saturated float64 // the longest spell with the service pool at its max
	}{
		{"idle", series(ms, repeat(0, 50), nil), "", 0, 0, 0},
		// One sample is no spell: its queue may have lasted a millisecond.
		{"one transient sample queued", series(ms, append(repeat(0, 20), append([]int{26}, repeat(0, 20)...)...), nil), "", 0.26, 0, 0},
		{"queued for half a second", series(ms, append(repeat(0, 10), append(repeat(3, 5), repeat(0, 10)...)...), nil), "", 0.03, 0.5, 0},
		{"queued for two seconds", series(ms, append(repeat(0, 10), append(repeat(3, 20), repeat(0, 10)...)...), nil), "PgBouncer clients queued for 2.0 s (up to 3 at once)", 0.03, 2, 0},
		// A spell still going at the end lasts one interval past its last sample.
		{"queued to the end", series(ms, append(repeat(0, 10), repeat(1, 15)...), nil), "PgBouncer clients queued for 1.5 s (up to 1 at once)", 0.01, 1.5, 0},
		{"service pool saturated one scrape", series(time.Second, nil, []int{5, 10, 5, 5}), "", 0, 0, 0},
		{"service pool saturated three scrapes", series(time.Second, nil, []int{5, 10, 10, 10, 4}), "service pool at its max (10/10) for 3.0 s", 0, 0, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PoolState(&rundir.Summary{}, tt.samples, nil, 0.1)
			if p.Reason != tt.reason || p.Exhausted != (tt.reason != "") {
				t.Errorf("exhausted %v, reason %q; want reason %q", p.Exhausted, p.Reason, tt.reason)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"worst wait", p.WorstWaitSeconds, tt.worst},
				{"PgBouncer waiting seconds", p.PgBouncerWaitingSeconds, tt.waiting},
				{"service pool saturated seconds", p.AppPoolSaturatedSeconds, tt.saturated},
			} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s %g, want %g", c.what, c.got, c.want)
				}
			}
		})
	}
	// A long wait alone is exhaustion, however few samples saw it.
	s := series(ms, []int{0, 1, 0}, nil)
	s[1].PgBouncer.MaxWaitSeconds = 1.5
	if p := PoolState(&rundir.Summary{}, s, nil, 0.1); !p.Exhausted || p.Reason != "a PgBouncer client waited 1.5 s" || p.WorstWaitSeconds != 1.5 {
		t.Errorf("a 1.5 s wait: %+v", p)
	}
	// Counters are taken as increases over the run.
	if p := PoolState(&rundir.Summary{}, series(time.Second, nil, []int{1, 2, 3, 4}), nil, 1); p.AppPoolAcquireWaits != 3 || !p.AppPoolSampled || p.PgBouncerSampled || p.Reason != "" {
		t.Errorf("counters: %+v", p)
	}
}

// TestSaturationReason pins the two ways a run is saturated and the
// words for each: the pool's own verdict, else dropped arrival-rate
// iterations, which name no single cause (a user not free, or one that
// reached its iteration after the scenario's end), each with the
// request p95 when there were requests; and a healthy run is not
// saturated.
func TestSaturationReason(t *testing.T) {
	lat := map[string]rundir.LatencyStats{"all": {Count: 10, P95Ms: 1500}}
	for _, tc := range []struct {
		name      string
		s         rundir.Summary
		saturated bool
		reason    string
	}{
		{"pool exhausted", rundir.Summary{
			Pool: &rundir.PoolState{Exhausted: true, Reason: "service pool at its max (10/10) for 4.0 s"},
			Load: &rundir.LoadResult{Latency: lat, DroppedIterations: 3}},
			true, "service pool at its max (10/10) for 4.0 s; request latency p95 1.5 s"},
		{"dropped iterations", rundir.Summary{
			Pool: &rundir.PoolState{},
			Load: &rundir.LoadResult{Latency: lat, DroppedIterations: 3}},
			true, "3 arrival-rate iterations dropped (no free user in time); request latency p95 1.5 s"},
		{"dropped, no requests", rundir.Summary{Load: &rundir.LoadResult{DroppedIterations: 1}},
			true, "1 arrival-rate iterations dropped (no free user in time)"},
		{"healthy", rundir.Summary{Pool: &rundir.PoolState{}, Load: &rundir.LoadResult{Latency: lat}}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f rundir.Forensics
			saturation(&f, &tc.s)
			if f.Saturated != tc.saturated || f.SaturatedReason != tc.reason {
				t.Errorf("saturated %v %q, want %v %q", f.Saturated, f.SaturatedReason, tc.saturated, tc.reason)
			}
		})
	}
}

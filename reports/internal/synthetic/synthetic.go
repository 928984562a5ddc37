// Package synthetic makes up runs for the reports' tests: seeded, leaky or
// healthy, with every series the probe and the engine may record, so that
// every plot has data to draw.
package synthetic

import (
	"math/rand/v2"
	"time"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/plots"
)

// Run is a seeded, made-up leaky ("before", variant commit-in-finally) or
// healthy ("after", fixed) run with every series the probe and engine may
// record — the service pool and load.jsonl included — and the probe's
// summary of it.
func Run(seed uint64, leaky bool) *plots.Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	const (
		interval = 100 * time.Millisecond
		duration = 30 * time.Second
		loadEnd  = 20 * time.Second
		poolMax  = 40
	)
	name, variant := "after", "fixed"
	if leaky {
		name, variant = "before", "commit-in-finally"
	}
	r := &plots.Run{Label: name + " (" + variant + ")", Summary: &rundir.Summary{
		SchemaVersion: rundir.SchemaVersion, Name: name, Profile: "synthetic", Started: t0, Ended: t0.Add(duration),
		EndReason:   rundir.EndCompleted,
		Environment: rundir.Environment{Variant: variant, IdleInTxTimeoutSeconds: 5, GatewayPoolSize: poolMax},
		Load: &rundir.LoadResult{Started: t0, Ended: t0.Add(loadEnd),
			Config: rundir.PlanSummary{Users: 60, Duration: loadEnd, RequestTimeout: time.Second}},
	}}
	var stuck, waits, canceled float64
	for t := time.Duration(0); t < duration; t += interval {
		load := t < loadEnd
		s := rundir.Sample{Time: t0.Add(t)}
		busy := 0
		if load {
			busy = 10 + rng.IntN(15)
		}
		if leaky && load {
			stuck = min(stuck+rng.Float64()*0.6, 35)
		} else if leaky && int(t/time.Second)%5 == 0 {
			stuck = max(stuck-3, 0)
		}
		idleInTx := int(stuck) + rng.IntN(4)
		s.States = probes.StateCounts{Active: busy / 2, Idle: max(0, poolMax-busy/2-idleInTx-5), IdleInTx: idleInTx, IdleInTxAborted: rng.IntN(2)}
		s.StuckIdleInTx = int(stuck)
		waiting := 0
		if leaky && stuck > 30 {
			waiting = rng.IntN(12)
		}
		s.PgBouncer = &probes.PoolSample{ClActive: busy + idleInTx, ClWaiting: waiting, SvActive: busy, MaxWaitSeconds: float64(waiting) * 0.08}
		acquired := min(poolMax, busy+int(stuck))
		if waiting > 0 {
			acquired = poolMax
			waits += float64(waiting)
			canceled += float64(rng.IntN(2))
		}
		s.AppPool = &rundir.AppPoolSample{Acquired: float64(acquired), Idle: float64(poolMax - acquired), Total: poolMax, Max: poolMax,
			AcquireWaitsTotal: waits, AcquireWaitSecondsTotal: waits * 0.2, CanceledAcquiresTotal: canceled, UnclosedSessions: float64(int(stuck / 10))}
		r.Samples = append(r.Samples, s)
	}
	for i := 0; i < 400; i++ {
		start := t0.Add(time.Duration(rng.Int64N(int64(loadEnd))))
		hold := rng.ExpFloat64() * 0.05
		reason := probes.EndReleased
		if leaky && i%4 == 0 {
			hold, reason = 5+rng.Float64()*0.3, probes.EndTimeout
		}
		r.Episodes = append(r.Episodes, probes.Episode{Start: start, End: start.Add(time.Duration(hold * float64(time.Second))),
			HoldSeconds: hold, EndReason: reason, Query: "SELECT 1", ApplicationName: "gateway"})
	}
	for sec := 1; sec <= int(loadEnd/time.Second); sec++ {
		req := int64(150 + rng.IntN(50))
		fail := int64(rng.IntN(5))
		p95 := 20 + rng.Float64()*30
		if leaky && sec > 4 {
			fail, p95 = int64(40+rng.IntN(60)), 950+rng.Float64()*50
		}
		r.Load = append(r.Load, rundir.LoadPoint{Time: t0.Add(time.Duration(sec) * time.Second), ElapsedSeconds: float64(sec),
			ActiveUsers: int64(min(60, sec*30)), Requests: req, Failures: fail, ReqPerSecond: float64(req),
			P50Ms: p95 / 3, P95Ms: p95, P99Ms: p95 * 1.2})
	}
	ps := probes.Summarize(probes.Config{Interval: interval, StuckAfter: 2 * time.Second}, 5*time.Second, r.Samples, r.Episodes)
	r.Summary.Probe = &ps
	return r
}

// Package synthetic makes up runs for the reports' tests: seeded, leaky or
// healthy, with every series the probe and the engine may record, so that
// every plot has data to draw.
package synthetic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
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
		s.States = rundir.StateCounts{Active: busy / 2, Idle: max(0, poolMax-busy/2-idleInTx-5), IdleInTx: idleInTx, IdleInTxAborted: rng.IntN(2)}
		s.StuckIdleInTx = int(stuck)
		waiting := 0
		if leaky && stuck > 30 {
			waiting = rng.IntN(12)
		}
		s.PgBouncer = &rundir.PoolSample{ClActive: busy + idleInTx, ClWaiting: waiting, SvActive: busy, MaxWaitSeconds: float64(waiting) * 0.08}
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
		reason := rundir.EndReleased
		if leaky && i%4 == 0 {
			hold, reason = 5+rng.Float64()*0.3, rundir.EndTimeout
		}
		r.Episodes = append(r.Episodes, rundir.Episode{Start: start, End: start.Add(time.Duration(hold * float64(time.Second))),
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

// tokenScopingSQL is the incident's token-scoping lookup: the last query
// of the sessions the leaky gateway leaves idle in transaction.
const tokenScopingSQL = "SELECT email_team_members.team_id, email_team_members.role FROM email_team_members WHERE email_team_members.user_email = $1"

// WriteRun writes Run(seed, leaky) into dir as the run directory leakbench
// run leaves before its reports are rendered (summary.json without the
// derived pool and forensics, samples.jsonl, episodes.jsonl, load.jsonl),
// with what a run of leakbench's own load adds and the recorded sign-off
// in reports/testdata lacks, so that every section of a report renders:
//   - the service pool's metrics in every sample (Run's);
//   - trace contexts: seven in eight episodes carry one in their last
//     query's sqlcommenter comment, and requests.jsonl indexes the
//     requests that sent most of them (one traced id in sixteen is
//     another client's), so the forensics join names requests, and
//     leaves some episodes not joined or without a trace context;
//   - a lock cascade: one in twenty of the stuck episodes blocked one to
//     three backends;
//   - in a leaky run, a few sessions the service released late (held
//     past the stuck threshold, then committed) beside the leaked ones.
//
// The same seed writes the same bytes.
func WriteRun(dir string, seed uint64, leaky bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r := Run(seed, leaky)
	rng := rand.New(rand.NewPCG(seed, 2))
	const stuckAfter = 2.0
	var reqs []rundir.Request
	for i := range r.Episodes {
		e := &r.Episodes[i]
		e.PID = int32(2000 + i)
		e.BackendStart = e.Start.Add(-time.Duration(1+rng.IntN(5)) * time.Second)
		if leaky && e.EndReason == rundir.EndReleased && i%25 == 1 {
			e.HoldSeconds = stuckAfter + 0.5 + rng.Float64()
			e.End = e.Start.Add(time.Duration(e.HoldSeconds * float64(time.Second)))
		}
		// Holds in 1/256 s, exact in binary: the forensics sum them over a
		// map (reports/forensics/join.go), in an order that changes from
		// one run to the next, and sums of inexact values would differ in
		// their last digit, and the golden files with them.
		e.HoldSeconds = quantize(e.HoldSeconds)
		e.End = e.Start.Add(time.Duration(e.HoldSeconds * float64(time.Second)))
		e.EndExact = e.EndReason == rundir.EndReleased
		e.Query, e.Fingerprint = tokenScopingSQL, tokenScopingSQL
		e.ApplicationName, e.ClientAddr = "mcp-gateway", "127.0.0.1"
		if i%8 == 7 {
			continue // no trace context: a statement the service sent by itself
		}
		e.TraceID = fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())
		e.SpanID = fmt.Sprintf("%016x", rng.Uint64())
		e.Query += fmt.Sprintf(" /*traceparent='00-%s-%s-01'*/", e.TraceID, e.SpanID)
		stuck := e.HoldSeconds >= stuckAfter
		if stuck && i%20 == 0 {
			e.Blocked = 1 + rng.IntN(3)
			e.BlockedWaitSeconds = quantize(float64(e.Blocked) * e.HoldSeconds * (0.5 + rng.Float64()/2))
		}
		if i%16 == 3 {
			continue // a trace id leakbench did not send: not in the index
		}
		q := rundir.Request{TraceID: e.TraceID, User: i % 60, Scenario: "agents", Iteration: int64(i / 60), Step: 1,
			Method: "tools/call", Name: "get_team_tools", Start: e.Start.Add(-20 * time.Millisecond),
			Seconds: quantize(0.02 + rng.Float64()*0.03), Outcome: rundir.RequestOK}
		if i%3 == 0 {
			q.Name = "record_note"
		}
		if stuck && e.EndReason != rundir.EndReleased {
			// The leaky gateway's request outlives its answer: the client
			// gave up at the request timeout.
			q.Seconds, q.Outcome = 1, rundir.RequestTimeout
		}
		reqs = append(reqs, q)
	}
	// The longest-held stuck session is the root of the worst cascade,
	// so that the report's worst episodes show one.
	if i := longestTraced(r.Episodes); i >= 0 && leaky {
		e := &r.Episodes[i]
		e.Blocked, e.BlockedWaitSeconds = 3, quantize(3*e.HoldSeconds*0.9)
	}
	slices.SortFunc(reqs, func(a, b rundir.Request) int { return a.Start.Compare(b.Start) })
	ps := probes.Summarize(probes.Config{Interval: 100 * time.Millisecond, StuckAfter: stuckAfter * time.Second}, 5*time.Second, r.Samples, r.Episodes)
	s := r.Summary
	s.Probe = &ps
	env := &s.Environment
	env.Provider, env.Target, env.LeakbenchVersion = "local", "http://127.0.0.1:8080/mcp", "synthetic"
	env.PostgresVersion, env.PgBouncerVersion, env.MaxConnections = "15.18", "PgBouncer 1.18.0", 100
	env.PoolMode, env.PgBouncerPoolSize = "transaction", 40
	l := s.Load
	l.EndReason = rundir.EndCompleted
	l.ErrorsByKind = map[string]int64{"timeout": 0}
	var p50, p95, p99 float64
	for _, p := range r.Load {
		l.Requests += p.Requests
		l.Failures += p.Failures
		l.ErrorsByKind["timeout"] += p.Failures
		p50, p95, p99 = max(p50, p.P50Ms), max(p95, p.P95Ms), max(p99, p.P99Ms)
	}
	l.Iterations = l.Requests / 2
	l.PeakUsers = l.Config.Users
	l.Latency = map[string]rundir.LatencyStats{"all": {Count: l.Requests - l.Failures, MinMs: 2, MeanMs: p50, P50Ms: p50, P90Ms: p95 * 0.9, P95Ms: p95, P99Ms: p99, MaxMs: p99 * 1.1}}
	if err := errors.Join(writeLines(filepath.Join(dir, rundir.SamplesFile), r.Samples),
		writeLines(filepath.Join(dir, rundir.EpisodesFile), r.Episodes),
		writeLines(filepath.Join(dir, rundir.LoadFile), r.Load),
		writeLines(filepath.Join(dir, rundir.RequestsFile), reqs)); err != nil {
		return err
	}
	return rundir.WriteFileFunc(filepath.Join(dir, rundir.SummaryFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	})
}

// longestTraced is the index of the longest-held episode with a trace
// context, -1 if none has one.
func longestTraced(eps []rundir.Episode) int {
	best := -1
	for i, e := range eps {
		if e.TraceID != "" && (best < 0 || e.HoldSeconds > eps[best].HoldSeconds) {
			best = i
		}
	}
	return best
}

// quantize rounds seconds to 1/256 s, a value float64 holds exactly.
func quantize(seconds float64) float64 { return math.Round(seconds*256) / 256 }

// writeLines writes recs to path, one JSON object a line.
func writeLines[T any](path string, recs []T) error {
	return rundir.WriteFileFunc(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

package capacity

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/derive"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// When a stage's limits tripped. "The limit that tripped first" (#28) is
// first in time within the stage, so each trip is timed from what the
// stage's run directory recorded, as an offset from its load's start:
//
//   - pool exhausted, pool pinned: the moment the report's own pool verdict
//     first held (derive.Onsets, from samples.jsonl);
//   - stuck sessions: the first sample with more stuck at once than the
//     limit allows;
//   - a threshold on a per-request metric (latency, failed share, request
//     counts): the start of the first second of the stage whose own value
//     broke the threshold's expression, the second's value computed from
//     the requests that ended in it (requests.jsonl), as the engine
//     computes the stage's; a count that must stay under a limit: the
//     second in which the running count passed it;
//   - dropped iterations: the first second of load.jsonl that dropped one.
//
// A stage's aggregate (p95 over the stage) broke only if some second's did
// (a percentile, share or mean of the whole lies within its seconds'), so
// a broken threshold nearly always has a time. One whose metric is not
// recorded per second (checks, gauges, iteration durations, a status tag),
// or a count that never reached a minimum, gets none: it says "time not
// recorded" and is ordered after the timed ones — never given a time the
// stage did not record.

// onset is when a limit first tripped: at in seconds from the load's
// start (nil: not recorded), basis what it was read from or why not.
type onset struct {
	at    *float64
	basis string
}

func notRecorded(why string) onset { return onset{basis: "time not recorded: " + why} }

// clock times one stage's trips.
type clock struct {
	start      time.Time // the load's start; zero: unknown
	pool       *derive.Onsets
	load       []rundir.LoadPoint
	thresholds map[string]onset // by thresholdKey
}

func thresholdKey(metric, expr string) string { return metric + " " + expr }

// newClock reads what the stage in r.Dir recorded of when its limits
// tripped; thresholds are the stage's, compiled.
func newClock(r *reports.Run, thresholds []*plan.CompiledThreshold) (*clock, error) {
	c := &clock{load: r.Load, thresholds: map[string]onset{}}
	if l := r.Summary.Load; l != nil {
		c.start = l.Started
	}
	if r.Summary.Probe != nil {
		on, err := derive.ReadOnsets(r.Dir, r.Summary)
		if err != nil {
			return nil, fmt.Errorf("time the stage's pool verdicts: %w", err)
		}
		c.pool = on
	}
	if c.start.IsZero() {
		return c, nil
	}
	if err := c.timeThresholds(r.Dir, thresholds); err != nil {
		return nil, fmt.Errorf("time the stage's thresholds: %w", err)
	}
	return c, nil
}

// since is the onset at t, read from basis; zero t: not recorded.
func (c *clock) since(t time.Time, basis, missing string) onset {
	switch {
	case c.start.IsZero():
		return notRecorded("the stage recorded no load start")
	case t.IsZero():
		return notRecorded(missing)
	}
	return atSeconds(t.Sub(c.start).Seconds(), basis)
}

func atSeconds(s float64, basis string) onset {
	s = math.Round(s*1000) / 1000
	return onset{at: &s, basis: basis}
}

func (c *clock) exhausted() onset {
	if c.pool == nil {
		return notRecorded("the stage has no samples.jsonl")
	}
	return c.since(c.pool.Exhausted, "samples.jsonl: "+c.pool.ExhaustedBy+", for at least the time the verdict asks", "no sample stretch behind the verdict")
}

func (c *clock) pinned() onset {
	if c.pool == nil {
		return notRecorded("the stage has no samples.jsonl")
	}
	return c.since(c.pool.Pinned, "samples.jsonl: the first pinned stretch began (the last statement of the service's backends)", "no pinned stretch kept")
}

func (c *clock) stuck(limit int) onset {
	if c.pool == nil {
		return notRecorded("the stage has no samples.jsonl")
	}
	return c.since(c.pool.StuckAbove(limit), fmt.Sprintf("samples.jsonl: the first sample with more than %d stuck at once", limit), "no sample showed it")
}

func (c *clock) dropped() onset {
	if c.start.IsZero() {
		return notRecorded("the stage recorded no load start")
	}
	prev := 0.0
	for _, p := range c.load {
		if p.DroppedIterations > 0 {
			return atSeconds(prev, fmt.Sprintf("load.jsonl: the first second that dropped an iteration (%d in %.0f–%.0f s)", p.DroppedIterations, prev, p.ElapsedSeconds))
		}
		prev = p.ElapsedSeconds
	}
	return notRecorded("load.jsonl has no second that dropped one")
}

func (c *clock) threshold(metric, expr string) onset {
	if c.start.IsZero() {
		return notRecorded("the stage recorded no load start")
	}
	if o, ok := c.thresholds[thresholdKey(metric, expr)]; ok {
		return o
	}
	return notRecorded("not a threshold of the stage's plan")
}

// seconds is one threshold's values in each second of the stage.
type seconds struct {
	t *plan.CompiledThreshold
	// by second from the load's start: latencies (ms) of a trend; the
	// matching requests (n) and those counted (k: failed, or all) of a
	// rate or counter.
	ms   map[int][]float64
	n, k map[int]int64
}

// timeThresholds evaluates each threshold on each second of the stage,
// reading requests.jsonl once (load.jsonl for dropped iterations).
func (c *clock) timeThresholds(dir string, ts []*plan.CompiledThreshold) error {
	var perReq []*seconds
	for _, t := range ts {
		key := thresholdKey(t.Metric, t.Expression)
		switch {
		case t.Name == threshold.MetricDroppedIterations && len(t.Filter) == 0:
			c.thresholds[key] = c.loadCounter(t)
		case !perRequest(t):
			c.thresholds[key] = notRecorded(fmt.Sprintf("%s is not recorded per second", t.Metric))
		case t.Expr.Agg == "count" && t.Expr.Op != "<" && t.Expr.Op != "<=":
			c.thresholds[key] = notRecorded("a count held to a minimum or a value is broken by the stage as a whole, at no one moment")
		default:
			perReq = append(perReq, &seconds{t: t, ms: map[int][]float64{}, n: map[int]int64{}, k: map[int]int64{}})
		}
	}
	if len(perReq) == 0 {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if errors.Is(err, fs.ErrNotExist) {
		for _, s := range perReq {
			c.thresholds[thresholdKey(s.t.Metric, s.t.Expression)] = notRecorded("the stage has no " + rundir.RequestsFile)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = jsonl.Each(f, -1, func(r *rundir.Request) {
		sec := int(math.Floor(r.Start.Add(time.Duration(r.Seconds * float64(time.Second))).Sub(c.start).Seconds()))
		for _, s := range perReq {
			s.add(sec, r)
		}
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", rundir.RequestsFile, err)
	}
	for _, s := range perReq {
		c.thresholds[thresholdKey(s.t.Metric, s.t.Expression)] = s.first()
	}
	return nil
}

// perRequest: the threshold's metric is computed from requests, each of
// which requests.jsonl records (not an http step's status).
func perRequest(t *plan.CompiledThreshold) bool {
	switch t.Name {
	case threshold.MetricReqDuration, threshold.MetricReqFailed, threshold.MetricReqs, threshold.MetricReqAborted:
		return true
	case threshold.MetricHTTPReqDuration, threshold.MetricHTTPReqFailed, threshold.MetricHTTPReqs:
		return !slices.ContainsFunc(t.Filter, func(g threshold.Tag) bool { return g.Name == "status" })
	}
	return false
}

// add counts request r, which ended in second sec, if the threshold's
// metric takes it — as the engine's metrics do (scenarios/engine's
// metrics.go, scenarios/engine/results' judge.go): a latency of every request but the aborted
// and canceled ones, a failed share over the requests answered.
func (s *seconds) add(sec int, r *rundir.Request) {
	t := s.t
	isHTTP := r.Method == "http"
	method, name := r.Method, r.Name
	if strings.HasPrefix(t.Name, "http_") {
		if !isHTTP {
			return
		}
		method, name, _ = strings.Cut(r.Name, " ")
	} else if isHTTP && t.Name != threshold.MetricReqDuration {
		return // the engine's mcp_req_duration takes http steps too; its counts do not
	}
	for _, g := range t.Filter {
		var v string
		switch g.Name {
		case "kind":
			continue // judged below, on the outcome
		case "scenario":
			v = r.Scenario
		case "method":
			v = method
		case "name":
			v = name
		}
		if v != g.Value {
			return
		}
	}
	gaveUp := r.Outcome == rundir.RequestAborted || r.Outcome == rundir.RequestCanceled
	switch t.Name {
	case threshold.MetricReqDuration, threshold.MetricHTTPReqDuration:
		if !gaveUp {
			s.ms[sec] = append(s.ms[sec], 1000*r.Seconds)
		}
	case threshold.MetricReqFailed, threshold.MetricHTTPReqFailed:
		if kind := kindFilter(t); kind != "" {
			// As the engine: a kind's share of the answered requests,
			// counting that kind whatever the outcome.
			if !gaveUp {
				s.n[sec]++
			}
			if outcomeKind(r) == kind {
				s.k[sec]++
			}
			return
		}
		if !gaveUp {
			s.n[sec]++
			if r.Outcome == rundir.RequestFailed || r.Outcome == rundir.RequestTimeout {
				s.k[sec]++
			}
		}
	case threshold.MetricReqAborted:
		if r.Outcome == rundir.RequestAborted {
			s.k[sec]++
		}
	default: // mcp_reqs, http_reqs
		s.k[sec]++
	}
}

func kindFilter(t *plan.CompiledThreshold) string {
	for _, g := range t.Filter {
		if g.Name == "kind" {
			return g.Value
		}
	}
	return ""
}

// outcomeKind is the error kind the engine counted the request under.
func outcomeKind(r *rundir.Request) string {
	switch r.Outcome {
	case rundir.RequestFailed:
		return r.Kind
	case rundir.RequestTimeout:
		return mcp.KindTimeout
	case rundir.RequestAborted:
		return mcp.KindAborted
	case rundir.RequestCanceled:
		return mcp.KindCanceled
	}
	return ""
}

// first is the start of the first second whose own value broke the
// threshold (a count: whose running total did).
func (s *seconds) first() onset {
	var secs []int
	for _, m := range []map[int]int64{s.n, s.k} {
		for k := range m {
			secs = append(secs, k)
		}
	}
	for k := range s.ms {
		secs = append(secs, k)
	}
	slices.Sort(secs)
	secs = slices.Compact(secs)
	x := s.t.Expr
	var total int64
	for _, sec := range secs {
		v, n, ok := s.value(sec, &total)
		if !ok || x.Holds(v) {
			continue
		}
		what := "own " + x.Agg
		if x.Agg == "p" {
			what = fmt.Sprintf("own p(%g)", x.Pct)
		}
		if x.Agg == "count" {
			what = "running count"
		}
		return atSeconds(float64(sec), fmt.Sprintf("requests.jsonl: the first second whose %s broke it (%.4g over %d, %d–%d s)", what, v, n, sec, sec+1))
	}
	return notRecorded("no second of requests.jsonl broke it on its own")
}

// value is the threshold's aggregation over second sec; total carries a
// count's running total. ok false: nothing to judge in that second.
func (s *seconds) value(sec int, total *int64) (v float64, n int64, ok bool) {
	x := s.t.Expr
	switch s.t.Name {
	case threshold.MetricReqDuration, threshold.MetricHTTPReqDuration:
		ms := s.ms[sec]
		if len(ms) == 0 {
			return 0, 0, false
		}
		return trend(ms, x), int64(len(ms)), true
	case threshold.MetricReqFailed, threshold.MetricHTTPReqFailed:
		if s.n[sec] == 0 {
			return 0, 0, false
		}
		return float64(s.k[sec]) / float64(s.n[sec]), s.n[sec], true
	}
	*total += s.k[sec]
	if x.Agg == "count" {
		return float64(*total), *total, true
	}
	return float64(s.k[sec]), s.k[sec], true // rate: that second's count
}

// trend aggregates one second's latencies (ms) as the expression asks; a
// percentile is the nearest rank, as the engine's histograms give it.
func trend(ms []float64, x threshold.Expr) float64 {
	slices.Sort(ms)
	switch x.Agg {
	case "avg":
		sum := 0.0
		for _, v := range ms {
			sum += v
		}
		return sum / float64(len(ms))
	case "min":
		return ms[0]
	case "max":
		return ms[len(ms)-1]
	case "med":
		return rank(ms, 50)
	}
	return rank(ms, x.Pct)
}

func rank(sorted []float64, pct float64) float64 {
	i := int(math.Ceil(pct/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// loadCounter times dropped_iterations from load.jsonl's seconds.
func (c *clock) loadCounter(t *plan.CompiledThreshold) onset {
	x := t.Expr
	if x.Agg == "count" && x.Op != "<" && x.Op != "<=" {
		return notRecorded("a count held to a minimum or a value is broken by the stage as a whole, at no one moment")
	}
	var total int64
	prev := 0.0
	for _, p := range c.load {
		total += p.DroppedIterations
		v := float64(p.DroppedIterations)
		if x.Agg == "count" {
			v = float64(total)
		}
		if !x.Holds(v) {
			return atSeconds(prev, fmt.Sprintf("load.jsonl: the first second whose dropped iterations broke it (%.4g, %.0f–%.0f s)", v, prev, p.ElapsedSeconds))
		}
		prev = p.ElapsedSeconds
	}
	return notRecorded("no second of load.jsonl broke it on its own")
}

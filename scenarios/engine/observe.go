package engine

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// evaluate observes the value a threshold is about and judges it.
func (e *engine) evaluate(t *plan.CompiledThreshold, all []*merged, elapsed time.Duration) rundir.Threshold {
	v, n := e.observe(t, all, elapsed)
	return rundir.Threshold{
		Metric:      t.Metric,
		Expression:  t.Expression,
		Pass:        t.Expr.Holds(v),
		Observed:    v,
		AbortOnFail: t.AbortOnFail,
		Samples:     n,
	}
}

// seriesFilter turns a tag filter into a predicate on series keys.
type seriesFilter struct {
	scen, op     int // -1: any
	name         int64
	kind         int
	matchNothing bool
}

func (e *engine) filter(f []threshold.Tag) seriesFilter {
	sf := seriesFilter{scen: -1, op: -1, name: -1, kind: -1}
	for _, t := range f {
		switch t.Name {
		case "scenario":
			sf.scen = -2
			for i, sr := range e.runs {
				if sr.cs.Name == t.Value {
					sf.scen = i
				}
			}
		case "method":
			op, _ := opIndex(t.Value)
			sf.op = int(op)
		case "name":
			id, ok := e.m.lookupName(t.Value)
			sf.name = int64(id)
			sf.matchNothing = sf.matchNothing || !ok
		case "kind":
			sf.kind = mcp.KindIndex(t.Value)
		}
	}
	sf.matchNothing = sf.matchNothing || sf.scen == -2
	return sf
}

func (f seriesFilter) match(k seriesKey) bool {
	return !f.matchNothing && (f.scen < 0 || int(k.scen) == f.scen) &&
		(f.op < 0 || int(k.op) == f.op) && (f.name < 0 || int64(k.name) == f.name)
}

// observe returns the threshold's aggregation of its metric and how many
// values it rests on.
func (e *engine) observe(t *plan.CompiledThreshold, all []*merged, elapsed time.Duration) (float64, int64) {
	switch t.Name {
	case threshold.MetricChecks:
		return e.observeChecks(t.Filter)
	case threshold.MetricHTTPReqDuration, threshold.MetricHTTPReqFailed, threshold.MetricHTTPReqs:
		return e.observeHTTP(t, all, elapsed)
	case threshold.MetricGeneratorLag:
		h := e.gen.lateness() // generator.go
		return trendValue(h, t.Expr), h.TotalCount()
	}
	f := e.filter(t.Filter)
	switch t.Name {
	case threshold.MetricReqDuration, threshold.MetricIterationDuration:
		h := newHist()
		for _, g := range all {
			isIter := g.key.op == opIteration
			if f.match(g.key) && isIter == (t.Name == threshold.MetricIterationDuration) {
				h.Merge(g.hist)
			}
		}
		return trendValue(h, t.Expr), h.TotalCount()
	case threshold.MetricReqFailed, threshold.MetricReqs, threshold.MetricReqAborted:
		var failed, sent, aborted, answered int64
		for _, g := range all {
			if g.key.op >= numRequestOps || !f.match(g.key) {
				continue
			}
			sent += g.reqs
			aborted += g.aborted
			answered += g.reqs - g.aborted - g.cancelled
			if f.kind >= 0 {
				failed += g.kinds[f.kind]
			} else {
				failed += g.failed
			}
		}
		switch t.Name {
		case threshold.MetricReqFailed:
			if answered <= 0 {
				return 0, 0
			}
			return float64(failed) / float64(answered), answered
		case threshold.MetricReqs:
			return counterValue(sent, elapsed, t.Expr), sent
		}
		return counterValue(aborted, elapsed, t.Expr), aborted
	}
	// Counters and gauges kept per scenario.
	var count, active, peak, low int64
	for i, sr := range e.runs {
		if f.matchNothing || (f.scen >= 0 && f.scen != i) {
			continue
		}
		sc := sr.sc
		switch t.Name {
		case threshold.MetricIterations:
			count += sc.iterations.Load()
		case threshold.MetricDroppedIterations:
			count += sc.dropped.Load()
		}
		active += sc.active.Load()
		peak += sc.peak.Load()
		low += max(sc.vusMin.Load(), 0)
	}
	if f.scen < 0 && !f.matchNothing {
		// Scenarios do not all peak at once: take the run's own gauge.
		peak, low = e.m.all.peak.Load(), max(e.m.all.vusMin.Load(), 0)
	}
	switch t.Name {
	case threshold.MetricVUs:
		switch t.Expr.Agg {
		case "min":
			return float64(low), 1
		case "max":
			return float64(peak), 1
		}
		return float64(active), 1
	case threshold.MetricVUsMax:
		return float64(peak), 1
	}
	return counterValue(count, elapsed, t.Expr), count
}

func counterValue(n int64, elapsed time.Duration, x threshold.Expr) float64 {
	if x.Agg == "rate" {
		if elapsed <= 0 {
			return 0
		}
		return float64(n) / elapsed.Seconds()
	}
	return float64(n)
}

// trendValue aggregates a histogram of microseconds into milliseconds.
func trendValue(h *hdrhistogram.Histogram, x threshold.Expr) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	switch x.Agg {
	case "avg":
		return h.Mean() / 1000
	case "min":
		return ms(h.Min())
	case "max":
		return ms(h.Max())
	case "med":
		return ms(h.ValueAtQuantile(50))
	case "p":
		return ms(h.ValueAtQuantile(x.Pct))
	}
	return 0
}

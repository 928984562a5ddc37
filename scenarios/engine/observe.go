package scenarios

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// evaluate observes the value a threshold is about and judges it.
func (e *engine) evaluate(t *cthreshold, all []*merged, elapsed time.Duration) ThresholdResult {
	v, n := e.observe(t, all, elapsed)
	return ThresholdResult{
		Metric:      t.src.Metric,
		Expression:  t.src.Expression,
		Pass:        t.expr.holds(v),
		Observed:    v,
		AbortOnFail: t.src.AbortOnFail,
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

func (e *engine) filter(f tagFilter) seriesFilter {
	sf := seriesFilter{scen: -1, op: -1, name: -1, kind: -1}
	for _, t := range f {
		switch t.tag {
		case "scenario":
			sf.scen = -2
			for i, sr := range e.runs {
				if sr.cs.Name == t.value {
					sf.scen = i
				}
			}
		case "method":
			op, _ := opIndex(t.value)
			sf.op = int(op)
		case "name":
			id, ok := e.m.lookupName(t.value)
			sf.name = int64(id)
			sf.matchNothing = sf.matchNothing || !ok
		case "kind":
			sf.kind = kindIndex(t.value)
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
func (e *engine) observe(t *cthreshold, all []*merged, elapsed time.Duration) (float64, int64) {
	f := e.filter(t.filter)
	switch t.metric {
	case MetricReqDuration, MetricIterationDuration:
		h := newHist()
		for _, g := range all {
			isIter := g.key.op == opIteration
			if f.match(g.key) && isIter == (t.metric == MetricIterationDuration) {
				h.Merge(g.hist)
			}
		}
		return trendValue(h, t.expr), h.TotalCount()
	case MetricReqFailed, MetricReqs, MetricReqAborted:
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
		switch t.metric {
		case MetricReqFailed:
			if answered <= 0 {
				return 0, 0
			}
			return float64(failed) / float64(answered), answered
		case MetricReqs:
			return counterValue(sent, elapsed, t.expr), sent
		}
		return counterValue(aborted, elapsed, t.expr), aborted
	}
	// Counters and gauges kept per scenario.
	var count, active, peak, low int64
	for i, sr := range e.runs {
		if f.matchNothing || (f.scen >= 0 && f.scen != i) {
			continue
		}
		sc := sr.sc
		switch t.metric {
		case MetricIterations:
			count += sc.iterations.Load()
		case MetricDroppedIterations:
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
	switch t.metric {
	case MetricVUs:
		switch t.expr.agg {
		case "min":
			return float64(low), 1
		case "max":
			return float64(peak), 1
		}
		return float64(active), 1
	case MetricVUsMax:
		return float64(peak), 1
	}
	return counterValue(count, elapsed, t.expr), count
}

func counterValue(n int64, elapsed time.Duration, x thresholdExpr) float64 {
	if x.agg == "rate" {
		if elapsed <= 0 {
			return 0
		}
		return float64(n) / elapsed.Seconds()
	}
	return float64(n)
}

// trendValue aggregates a histogram of microseconds into milliseconds.
func trendValue(h *hdrhistogram.Histogram, x thresholdExpr) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	switch x.agg {
	case "avg":
		return h.Mean() / 1000
	case "min":
		return ms(h.Min())
	case "max":
		return ms(h.Max())
	case "med":
		return ms(h.ValueAtQuantile(50))
	case "p":
		return ms(h.ValueAtQuantile(x.pct))
	}
	return 0
}

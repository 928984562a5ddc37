package results

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// Judge observes the value threshold t is about in c and judges it;
// elapsed is how long the run has played (counter rates are per second
// of it). The engine judges abortOnFail thresholds with it while the run
// plays, and every threshold at its end; Merge judges the shards' sum
// with it, so that a merged run is judged as one run would have been.
func Judge(c *Counts, t *plan.CompiledThreshold, elapsed time.Duration) rundir.Threshold {
	v, n := observe(c, t, elapsed)
	return rundir.Threshold{
		Metric:      t.Metric,
		Expression:  t.Expression,
		Pass:        t.Expr.Holds(v),
		Observed:    v,
		AbortOnFail: t.AbortOnFail,
		Samples:     n,
	}
}

// seriesFilter turns a tag filter into a predicate on series.
type seriesFilter struct {
	scen, method string // "": any
	name         string
	hasName      bool
	kind         string // "": any
	matchNothing bool
}

func filter(c *Counts, f []threshold.Tag) seriesFilter {
	var sf seriesFilter
	for _, t := range f {
		switch t.Name {
		case "scenario":
			sf.scen = t.Value
			sf.matchNothing = sf.matchNothing || !slices.ContainsFunc(c.Plan.Scenarios, func(cs *plan.CompiledScenario) bool { return cs.Name == t.Value })
		case "method":
			sf.method = t.Value // one of plan.Methods: plan.Compile refuses others
		case "name":
			sf.name, sf.hasName = t.Value, true
		case "kind":
			sf.kind = t.Value
		}
	}
	return sf
}

func (f seriesFilter) match(s *rundir.SeriesCounts) bool {
	return !f.matchNothing && (f.scen == "" || s.Scenario == f.scen) &&
		(f.method == "" || s.Method == f.method) && (!f.hasName || s.Name == f.name)
}

// observe returns the threshold's aggregation of its metric and how many
// values it rests on.
func observe(c *Counts, t *plan.CompiledThreshold, elapsed time.Duration) (float64, int64) {
	switch t.Name {
	case threshold.MetricChecks:
		return observeChecks(c.State.Checks, t.Filter)
	case threshold.MetricHTTPReqDuration, threshold.MetricHTTPReqFailed, threshold.MetricHTTPReqs:
		return observeHTTP(c, t, elapsed)
	case threshold.MetricGeneratorLag:
		h := c.Lateness
		if h == nil {
			return 0, 0
		}
		return trendValue(h, t.Expr), h.TotalCount()
	}
	f := filter(c, t.Filter)
	series := c.State.Series
	switch t.Name {
	case threshold.MetricReqDuration, threshold.MetricIterationDuration:
		// mcp_req_duration is of MCP requests only, as the report's
		// latency is: an http step's series (http_req_duration's) was once
		// taken in too.
		h := hdrlog.New()
		for i := range series {
			s := &series[i]
			of := isRequest(s)
			if t.Name == threshold.MetricIterationDuration {
				of = s.Method == MethodIteration
			}
			if of && f.match(s) {
				h.Merge(c.Hists[i])
			}
		}
		return trendValue(h, t.Expr), h.TotalCount()
	case threshold.MetricReqFailed, threshold.MetricReqs, threshold.MetricReqAborted:
		var failed, sent, aborted, answered int64
		for i := range series {
			s := &series[i]
			if !isRequest(s) || !f.match(s) {
				continue
			}
			sent += s.Requests
			aborted += s.Aborted
			answered += s.Requests - s.Aborted - s.Cancelled
			if f.kind != "" {
				failed += s.Kinds[f.kind]
			} else {
				failed += s.Failed
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
	for i, sc := range c.State.Scenarios {
		if f.matchNothing || (f.scen != "" && f.scen != sc.Name) {
			continue
		}
		switch t.Name {
		case threshold.MetricIterations:
			count += sc.Iterations
		case threshold.MetricDroppedIterations:
			count += sc.DroppedIterations
		}
		if i < len(c.Active) {
			active += c.Active[i]
		}
		peak += sc.PeakUsers
		low += sc.MinUsers
	}
	if f.scen == "" && !f.matchNothing {
		// Scenarios do not all peak at once: take the run's own gauge.
		peak, low = c.State.PeakUsers, c.State.MinUsers
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

// observeChecks is the checks metric: passes over checks judged.
func observeChecks(checks []rundir.CheckResult, f []threshold.Tag) (float64, int64) {
	var pass, all int64
	for _, c := range checks {
		if !tagsMatch(f, map[string]string{"scenario": c.Scenario, "check": c.Check}) {
			continue
		}
		pass += c.Passes
		all += c.Passes + c.Fails
	}
	if all == 0 {
		return 0, 0
	}
	return float64(pass) / float64(all), all
}

// tagsMatch reports whether every tag of the filter has its value in tags.
func tagsMatch(f []threshold.Tag, tags map[string]string) bool {
	for _, t := range f {
		if v, ok := tags[t.Name]; ok && v != t.Value && !strings.EqualFold(t.Name, "method") {
			return false
		} else if ok && strings.EqualFold(t.Name, "method") && !strings.EqualFold(v, t.Value) {
			return false
		}
	}
	return true
}

// httpMatch selects http series by a threshold's tags.
func httpMatch(f []threshold.Tag, s *rundir.SeriesCounts) bool {
	if s.Method != MethodHTTP {
		return false
	}
	method, name, _ := strings.Cut(s.Name, " ")
	return tagsMatch(f, map[string]string{"scenario": s.Scenario, "method": method, "name": name, "status": strconv.Itoa(s.Status)})
}

// observeHTTP is http_req_duration, http_req_failed and http_reqs.
func observeHTTP(c *Counts, t *plan.CompiledThreshold, elapsed time.Duration) (float64, int64) {
	h := hdrlog.New()
	var sent, failed, answered int64
	for i := range c.State.Series {
		s := &c.State.Series[i]
		if !httpMatch(t.Filter, s) {
			continue
		}
		h.Merge(c.Hists[i])
		sent += s.Requests
		failed += s.Failed
		answered += s.Requests - s.Aborted - s.Cancelled
	}
	switch t.Name {
	case threshold.MetricHTTPReqDuration:
		return trendValue(h, t.Expr), h.TotalCount()
	case threshold.MetricHTTPReqFailed:
		if answered <= 0 {
			return 0, 0
		}
		return float64(failed) / float64(answered), answered
	}
	return counterValue(sent, elapsed, t.Expr), sent
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

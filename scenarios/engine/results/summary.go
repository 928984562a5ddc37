package results

import (
	"math"
	"sort"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// How a run ended (Result.EndReason).
const (
	EndCompleted          = "completed"
	EndInterrupted        = "interrupted"
	EndAbortedByThreshold = "aborted_by_threshold"
)

// The methods of the series that are not MCP requests (SeriesCounts.Method).
const (
	MethodIteration = "iteration" // a scenario's iterations
	MethodHTTP      = "http"      // http steps
)

// MaxErrorSamples is how many distinct error messages a Result keeps
// (LoadResult.ErrorSamples), one run's or merged shards'.
const MaxErrorSamples = 10

// Counts is what a run counted, as Summarize and Judge read it: its
// series.json state (the engine's counters read at one instant, or the
// shards' added up by Merge), the histograms of its series, and what
// series.json does not keep.
type Counts struct {
	// Plan is the plan played (a segment's share of it, for a shard):
	// its scenarios, in order, are State.Scenarios'.
	Plan  *plan.Compiled
	State *rundir.SeriesState
	// Hists are the series' histograms: Hists[i] is State.Series[i]'s.
	Hists []*hdrhistogram.Histogram
	// Lateness is the generator's lateness over the run (generator_lag).
	Lateness *hdrhistogram.Histogram
	// Active are the users active in each scenario when the counts were
	// read (nil: none, as once a run has ended).
	Active []int64
}

// Summarize is the Result of c: the counters summed over scenarios,
// latency summaries of the merged histograms, and every threshold judged
// (Judge) over the run's span. The Plan is left for the caller to record.
func Summarize(c *Counts) *rundir.LoadResult {
	st := c.State
	r := &rundir.LoadResult{
		Started:           st.Started,
		Ended:             st.Ended,
		EndReason:         st.EndReason,
		ErrorsByKind:      make(map[string]int64, mcp.NumKinds),
		PeakUsers:         int(st.PeakUsers),
		Latency:           latency(st.Series, c.Hists, ""),
		IterationDuration: iterationStats(st.Series, c.Hists, ""),
		Scenarios:         make(map[string]rundir.ScenarioResult, len(st.Scenarios)),
		FirstErrors:       st.FirstErrors,
		Config:            configOf(c.Plan),
	}
	r.Interrupted = r.EndReason == EndInterrupted
	for _, k := range mcp.Kinds {
		r.ErrorsByKind[k] = 0
	}
	for i, sc := range st.Scenarios {
		s := rundir.ScenarioResult{
			Executor:          c.Plan.Scenarios[i].Executor,
			Requests:          sc.Requests,
			Failures:          sc.Failures,
			Aborted:           sc.Aborted,
			Iterations:        sc.Iterations,
			DroppedIterations: sc.DroppedIterations,
			PeakUsers:         int(sc.PeakUsers),
			ErrorsByKind:      make(map[string]int64, mcp.NumKinds),
			Latency:           latency(st.Series, c.Hists, sc.Name),
			IterationDuration: iterationStats(st.Series, c.Hists, sc.Name),
		}
		for _, name := range mcp.Kinds {
			n := sc.Kinds[name]
			s.ErrorsByKind[name] = n
			r.ErrorsByKind[name] += n
		}
		r.Scenarios[sc.Name] = s
		r.Requests += s.Requests
		r.Failures += s.Failures
		r.Aborted += s.Aborted
		r.Iterations += s.Iterations
		r.DroppedIterations += s.DroppedIterations
		r.Reinits += sc.Reinits
		r.InitRetries += sc.InitRetries
		r.AbortedUsers += sc.AbortedUsers
		r.EndedSessions += sc.EndedSessions
		if f := sc.Features; f != nil {
			if r.Features == nil {
				r.Features = &rundir.FeatureStats{}
			}
			r.Features.Add(f)
		}
	}
	elapsed := st.Ended.Sub(st.Started)
	for _, t := range c.Plan.Thresholds {
		r.Thresholds = append(r.Thresholds, Judge(c, t, elapsed))
	}
	r.ErrorSamples = append([]string{}, st.ErrorSamples...)
	r.Checks, r.HTTP = st.Checks, httpResults(st.Series, c.Hists)
	addProtocols(r, st.Scenarios)
	r.Generator = st.Generator
	return r
}

// isRequest reports whether a series is of MCP requests (not iterations,
// not http steps).
func isRequest(s *rundir.SeriesCounts) bool {
	return s.Method != MethodIteration && s.Method != MethodHTTP
}

// latency summarizes the request series of scenario scen (all scenarios
// if scen is ""): per method, per "tools/call:<name>" and
// "prompts/get:<name>", and OpAll.
func latency(series []rundir.SeriesCounts, hists []*hdrhistogram.Histogram, scen string) map[string]rundir.LatencyStats {
	merged := map[string]*hdrhistogram.Histogram{}
	add := func(key string, h *hdrhistogram.Histogram) {
		if merged[key] == nil {
			merged[key] = hdrlog.New()
		}
		merged[key].Merge(h)
	}
	for i := range series {
		s := &series[i]
		if !isRequest(s) || (scen != "" && s.Scenario != scen) {
			continue
		}
		add(s.Method, hists[i])
		add(rundir.OpAll, hists[i])
		if s.Name != "" {
			add(s.Method+":"+s.Name, hists[i])
		}
	}
	out := make(map[string]rundir.LatencyStats, len(merged)+1)
	for k, h := range merged {
		out[k] = Stats(h)
	}
	if _, ok := out[rundir.OpAll]; !ok {
		out[rundir.OpAll] = rundir.LatencyStats{}
	}
	return out
}

// iterationStats summarizes iteration durations of scenario scen (all if
// scen is "").
func iterationStats(series []rundir.SeriesCounts, hists []*hdrhistogram.Histogram, scen string) rundir.LatencyStats {
	h := hdrlog.New()
	for i, s := range series {
		if s.Method == MethodIteration && (scen == "" || s.Scenario == scen) {
			h.Merge(hists[i])
		}
	}
	return Stats(h)
}

// Stats summarizes a histogram of microseconds in milliseconds.
func Stats(h *hdrhistogram.Histogram) rundir.LatencyStats {
	if h.TotalCount() == 0 {
		return rundir.LatencyStats{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return rundir.LatencyStats{
		Count:  h.TotalCount(),
		MinMs:  ms(h.Min()),
		MeanMs: math.Round(h.Mean()) / 1000,
		P50Ms:  ms(h.ValueAtQuantile(50)),
		P90Ms:  ms(h.ValueAtQuantile(90)),
		P95Ms:  ms(h.ValueAtQuantile(95)),
		P99Ms:  ms(h.ValueAtQuantile(99)),
		MaxMs:  ms(h.Max()),
	}
}

// httpResults sums up the http steps by "METHOD name".
func httpResults(series []rundir.SeriesCounts, hists []*hdrhistogram.Histogram) map[string]rundir.HTTPStats {
	type acc struct {
		s rundir.HTTPStats
		h []*hdrhistogram.Histogram
	}
	by := map[string]*acc{}
	for i, g := range series {
		if g.Method != MethodHTTP {
			continue
		}
		a := by[g.Name]
		if a == nil {
			a = &acc{s: rundir.HTTPStats{Statuses: map[string]int64{}}}
			by[g.Name] = a
		}
		a.s.Requests += g.Requests
		a.s.Failures += g.Failed
		if g.Status > 0 {
			a.s.Statuses[strconv.Itoa(g.Status)] += g.Requests
		}
		a.h = append(a.h, hists[i])
	}
	if len(by) == 0 {
		return nil
	}
	out := make(map[string]rundir.HTTPStats, len(by))
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := by[n]
		h := hdrlog.New()
		for _, g := range a.h {
			h.Merge(g)
		}
		a.s.Latency = Stats(h)
		out[n] = a.s
	}
	return out
}

// addProtocols writes the users' protocol versions into r: the run's,
// and each scenario's.
func addProtocols(r *rundir.LoadResult, scens []rundir.ScenarioCounts) {
	for _, sc := range scens {
		counts := sc.Protocol
		if len(counts) == 0 {
			continue
		}
		s := r.Scenarios[sc.Name]
		s.Protocol = counts
		r.Scenarios[sc.Name] = s
		if r.Protocol == nil {
			r.Protocol = map[string]int64{}
		}
		for v, n := range counts {
			r.Protocol[v] += n
		}
	}
}

// configOf sums up a compiled plan.
func configOf(cp *plan.Compiled) rundir.PlanSummary {
	c := rundir.PlanSummary{Target: redact.URL(cp.Plan.Target), RequestTimeout: cp.Plan.Timeout.D()}
	for _, s := range cp.Scenarios {
		c.Users += s.Users
		c.Duration = max(c.Duration, s.StartTime.D()+s.Length)
	}
	return c
}

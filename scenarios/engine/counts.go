package engine

import (
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// What the engine counted, read for package results: the Result and
// series.json are made from it, as a merge of shards makes them from the
// shards' series.json.

func opName(op uint8) string {
	if op == opHTTP {
		return results.MethodHTTP
	}
	return opNames[op]
}

func kindsMap(k *[mcp.NumKinds]int64) map[string]int64 {
	var m map[string]int64
	for i, n := range k {
		if n != 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[mcp.Kinds[i]] = n
		}
	}
	return m
}

// counts reads what e counted so far, as series.json has it, for a run
// that ends (or was last looked at) at ended. Its Plan and StartAt are the
// caller's to record, and its Generator: the self-check is judged once,
// at the end (result).
func (e *engine) counts(ended time.Time) *results.Counts {
	reason, _ := e.endReason.Load().(string) // "" while the run plays
	e.m.samplesMu.Lock()
	samples := append([]string{}, e.m.samples...)
	e.m.samplesMu.Unlock()
	st := &rundir.SeriesState{
		Segment: e.segment.String(), Started: e.started, Ended: ended, EndReason: reason,
		PeakUsers: e.m.all.peak.Load(), MinUsers: max(e.m.all.vusMin.Load(), 0),
		Checks: e.checkResults(), ErrorSamples: samples, FirstErrors: e.m.firstErrors(e.started),
	}
	all := e.m.collect(nil)
	c := &results.Counts{Plan: e.cp, State: st, Hists: make([]*hdrhistogram.Histogram, 0, len(all)), Lateness: e.gen.lateness()}
	for i, g := range all {
		st.Series = append(st.Series, rundir.SeriesCounts{
			Tag: "s" + strconv.Itoa(i), Scenario: e.runs[g.key.scen].cs.Name, Method: opName(g.key.op),
			Name: e.m.name(g.key.name), Status: int(g.key.status),
			Requests: g.reqs, Failed: g.failed, Aborted: g.aborted, Cancelled: g.cancelled, Kinds: kindsMap(&g.kinds),
		})
		c.Hists = append(c.Hists, g.hist)
	}
	for _, sr := range e.runs {
		sc := sr.sc
		var kinds [mcp.NumKinds]int64
		for k := range kinds {
			kinds[k] = sc.kinds[k].Load()
		}
		st.Scenarios = append(st.Scenarios, rundir.ScenarioCounts{
			Name: sr.cs.Name, Requests: sc.requests.Load(), Failures: sc.failures.Load(), Aborted: sc.aborted.Load(),
			Iterations: sc.iterations.Load(), DroppedIterations: sc.dropped.Load(), Kinds: kindsMap(&kinds),
			PeakUsers: sc.peak.Load(), MinUsers: max(sc.vusMin.Load(), 0),
			Reinits: sc.reinits.Load(), InitRetries: sc.initRetries.Load(), AbortedUsers: sc.retired.Load(), EndedSessions: sc.ended.Load(),
			Protocol: sc.protocols.snapshot(), Features: sc.features.snapshot(),
		})
		c.Active = append(c.Active, sc.active.Load())
	}
	return c
}

// writeSeries writes histograms.hlog and series.json of the run whose
// Result is res into dir: what leakbench merge adds shards up from.
func (e *engine) writeSeries(dir string, res *rundir.LoadResult, startAt time.Time) error {
	c := e.counts(res.Ended)
	c.State.Plan, c.State.StartAt, c.State.Generator = res.Plan, startAt, res.Generator
	return results.WriteSeries(dir, c)
}

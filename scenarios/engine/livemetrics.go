package engine

import (
	"strings"

	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// liveSnapshot is what a scrape of the live metrics (RunOptions.MetricsAddr,
// package live) reports: every series merged over the shards, and each
// scenario's counters, and the generator's self-check of its last second.
func (e *engine) liveSnapshot() live.Snapshot {
	var s live.Snapshot
	for _, g := range e.m.collect(nil) {
		ls := live.Series{Scenario: e.runs[g.key.scen].cs.Name, Requests: g.reqs, Aborted: g.aborted, Hist: g.hist}
		switch g.key.op {
		case opIteration:
			ls.Kind = live.KindIteration
		case opHTTP:
			ls.Kind, ls.Status = live.KindHTTP, int(g.key.status)
			ls.Method, ls.Name, _ = strings.Cut(e.m.name(g.key.name), " ")
		default:
			ls.Method, ls.Name = opNames[g.key.op], e.m.name(g.key.name)
		}
		for k, n := range g.kinds {
			if n > 0 {
				if ls.Failures == nil {
					ls.Failures = map[string]int64{}
				}
				ls.Failures[mcp.Kinds[k]] = n
			}
		}
		s.Series = append(s.Series, ls)
	}
	for _, sr := range e.runs {
		sc := sr.sc
		s.Scenarios = append(s.Scenarios, live.Scenario{Name: sr.cs.Name, Iterations: sc.iterations.Load(),
			Dropped: sc.dropped.Load(), VUs: sc.active.Load(), VUsMax: sc.peak.Load(), Features: sc.features.snapshot()})
	}
	s.Generator = e.gen.live() // generator.go
	return s
}

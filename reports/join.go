package reports

import (
	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
)

// addTrace notes a stuck episode's trace id for the join.
func (fb *forensicsBuilder) addTrace(e *probes.Episode) {}

// join fills Worst (and, once the request index is read, the requests).
func (fb *forensicsBuilder) join() {
	for _, e := range worst(fb.stuck) {
		fb.f.Worst = append(fb.f.Worst, rundir.WorstEpisode{PID: e.PID, Start: e.Start, HoldSeconds: e.HoldSeconds,
			EndReason: e.EndReason, Fingerprint: e.Fingerprint})
	}
}

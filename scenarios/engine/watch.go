package engine

import (
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// Watcher follows a run as it plays: a live dashboard. It is handed what
// the engine keeps anyway — the counters and histograms a /metrics scrape
// reads, and each second's line of load.jsonl — so watching adds nothing
// to the request path.
type Watcher interface {
	// Started is called once, as the load starts, with snap: it reads the
	// engine's counters and histograms as a /metrics scrape does, and is
	// safe to call from any goroutine until RunPlan returns.
	Started(snap func() live.Snapshot)
	// Second gets each second's line of load.jsonl as the engine makes it
	// (with or without a run directory), from the engine's clock
	// goroutine: it must not block.
	Second(p rundir.LoadPoint)
}

// startWatch tells w, if any, that the load starts.
// A Scaler is handed Scale too when the plan has an externally-controlled
// scenario.
func (e *engine) startWatch(w Watcher) {
	if w == nil {
		return
	}
	w.Started(e.liveSnapshot)
	if s, ok := w.(Scaler); ok {
		if ts := e.scaleTargets(); len(ts) > 0 {
			s.Scalable(e.Scale, ts) // external.go
		}
	}
}

package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// recordingWatcher keeps what the engine handed it.
type recordingWatcher struct {
	mu      sync.Mutex
	snap    func() live.Snapshot
	started int
	seconds []rundir.LoadPoint
}

func (w *recordingWatcher) Started(snap func() live.Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.snap, w.started = snap, w.started+1
}

func (w *recordingWatcher) Second(p rundir.LoadPoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seconds = append(w.seconds, p)
}

// TestWatcherGetsTheLiveView: without a run directory, a watcher is told
// once that the load started, gets one load line a second, and its
// snapshot holds every request the result counts.
func TestWatcherGetsTheLiveView(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 2500ms, flow: [think: {uniform: [5ms, 20ms]}, ping]}\n")
	w := &recordingWatcher{}
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, Watch: w})
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started != 1 || w.snap == nil {
		t.Fatalf("Started called %d times", w.started)
	}
	if n := len(w.seconds); n < 2 || n > 3 {
		t.Fatalf("%d load lines in 2.5s, want 2", n)
	}
	var sum int64
	for _, l := range w.seconds {
		sum += l.Requests
		if l.ActiveUsers != 2 {
			t.Errorf("line at %.1fs: %d users, want 2", l.ElapsedSeconds, l.ActiveUsers)
		}
	}
	if sum == 0 || sum > res.Requests {
		t.Errorf("lines add up to %d requests, the result has %d", sum, res.Requests)
	}
	var snapped int64
	for _, s := range w.snap().Series {
		if s.Kind == live.KindMCP {
			snapped += s.Requests
		}
	}
	if snapped != res.Requests {
		t.Errorf("the snapshot after the run holds %d requests, the result %d", snapped, res.Requests)
	}
}

package engine

import (
	"context"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestIterationHandedAtTheEndIsDropped: an arrival-rate iteration handed
// to a user that has not started it when the scenario ends (its goroutine
// scheduled late, as under the race detector on a loaded machine) counts
// as dropped, so that iterations and dropped ones still add up to the
// schedule; a user with nothing pending drops nothing.
func TestIterationHandedAtTheEndIsDropped(t *testing.T) {
	f := newFakeRun(t, mustParse(t, mergePlan))
	sr := f.e.runs[1] // rate: constant-arrival-rate
	if sr.cs.Name != "rate" {
		t.Fatalf("scenario %q, want rate", sr.cs.Name)
	}
	soft, endSoft := context.WithCancel(context.Background())
	endSoft() // the scenario has ended
	hard := context.Background()

	for _, tc := range []struct {
		name    string
		pending int
	}{{"one iteration pending", 1}, {"nothing pending", 0}} {
		before := sr.sc.dropped.Load()
		jobs := make(chan time.Time, 1)
		for range tc.pending {
			jobs <- time.Now()
		}
		done := make(chan struct{})
		go func() {
			newVU(sr, 0, 0).serve(soft, hard, jobs, make(chan *vu, 1), nil)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the user did not stop at the scenario's end", tc.name)
		}
		if got := sr.sc.dropped.Load() - before; got != int64(tc.pending) {
			t.Errorf("%s: %d dropped, want %d", tc.name, got, tc.pending)
		}
	}
}

// TestIterationCutBeforeItsRequestIsDropped: an arrival-rate iteration
// that its user began but that the scenario's end cut before it sent a
// request — here, thinking 500 ms when the schedule ends at 1 s — counts
// as dropped, so that iterations and dropped ones add up to the schedule
// (10); each completed one sent its request. Before, such iterations
// were neither, and the sum fell short (as a shard's did, under the race
// detector on a loaded machine, when the end came between the hand-over
// and the first request).
func TestIterationCutBeforeItsRequestIsDropped(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p := mustParse(t, `
scenarios:
  rate:
    executor: constant-arrival-rate
    rate: 10
    duration: 1s
    preAllocatedVUs: 10
    maxVUs: 10
    flow: [{think: 500ms}, tools/list]
`)
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Scenarios["rate"]
	if r.Iterations+r.DroppedIterations != 10 || r.DroppedIterations == 0 {
		t.Errorf("%d iterations + %d dropped; want 10, some dropped (those still thinking at the end)", r.Iterations, r.DroppedIterations)
	}
	if got := res.Latency[plan.OpListTools].Count; got != r.Iterations {
		t.Errorf("%d tools/list answered for %d iterations", got, r.Iterations)
	}
}

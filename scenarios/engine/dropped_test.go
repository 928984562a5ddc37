package engine

import (
	"context"
	"testing"
	"time"
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

// TestIterationReachedTooLateNeverBegan: an arrival-rate iteration whose
// user reaches it after the scenario's end (after serve's own check: the
// window in which a shard under the race detector on a loaded machine
// lost one, 29 + 0 of 30) reports that it never began, and serve counts
// it as dropped; one that the end cuts during its think began, and is
// not dropped.
func TestIterationReachedTooLateNeverBegan(t *testing.T) {
	f := newFakeRun(t, mustParse(t, mergePlan))
	sr := f.e.runs[1] // rate: flow [tools/list]
	ended, endSoft := context.WithCancel(context.Background())
	endSoft()
	if newVU(sr, 0, 0).iterate(ended, context.Background(), time.Now()) {
		t.Error("an iteration reached after the scenario's end says it began")
	}

	g := newFakeRun(t, mustParse(t, "scenarios:\n  rate: {executor: constant-arrival-rate, rate: 10, duration: 1s, preAllocatedVUs: 1, flow: [{think: 1s}, tools/list]}\n"))
	soft, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if !newVU(g.e.runs[0], 0, 0).iterate(soft, context.Background(), time.Now()) {
		t.Error("an iteration cut during its think says it never began")
	}
}

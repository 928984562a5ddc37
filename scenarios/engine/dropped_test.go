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

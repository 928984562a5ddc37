package derive

import (
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestWorstEpisodes keeps the longest held, in the order they came.
func TestWorstEpisodes(t *testing.T) {
	w := NewWorst(3)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, hold := range []float64{1, 5, 2, 5, 0.5, 7, 5} {
		w.Add(&rundir.Episode{PID: int32(i), Start: t0.Add(time.Duration(i) * time.Second), HoldSeconds: hold})
	}
	var pids []int32
	for _, e := range w.Episodes() {
		pids = append(pids, e.PID)
	}
	if want := []int32{1, 3, 5}; !slices.Equal(pids, want) {
		t.Errorf("kept %v, want %v", pids, want)
	}
}

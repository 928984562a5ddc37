package probes

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestStuckTraces: the live list of stuck episodes names those held past
// StuckAfter whose query carried a trace id — open ones the oldest first
// and bounded, with their hold so far and a fingerprint (no literal) —
// and an ended episode is listed when it was stuck and traced.
func TestStuckTraces(t *testing.T) {
	tr := newTracker(0, false)
	traced := func(pid int32, sc float64) backendRow {
		r := row(pid, 0, stateIdleInTx, sc)
		r.Query = fmt.Sprintf("SELECT * FROM t WHERE email = 'ann@example.com' /*traceparent='00-%032x-%016x-01'*/", pid, pid)
		return r
	}
	rows := []backendRow{traced(1, 0.5), traced(2, 0.2), row(3, 0, stateIdleInTx, 0.1), traced(4, 2.9)}
	for i := range liveStuck + 5 {
		rows = append(rows, traced(int32(100+i), 1))
	}
	tr.observe(at(3), rows)
	got := tr.stuckOpen(at(3), time.Second)
	if len(got) != liveStuck {
		t.Fatalf("%d open stuck episodes listed, want the bound %d", len(got), liveStuck)
	}
	if got[0].PID != 2 || got[1].PID != 1 || !got[0].Open || got[0].HoldSeconds < 2.79 || got[0].TraceID != fmt.Sprintf("%032x", 2) {
		t.Errorf("first two %+v, %+v: want pids 2 then 1 (the oldest), open, traced", got[0], got[1])
	}
	for _, s := range got {
		if s.PID == 3 || s.PID == 4 {
			t.Errorf("pid %d listed: untraced or not stuck yet", s.PID)
		}
		if strings.Contains(s.Fingerprint, "ann@example.com") || s.Fingerprint == "" {
			t.Errorf("fingerprint %q", s.Fingerprint)
		}
	}
	e := rundir.Episode{PID: 9, HoldSeconds: 1.5, EndReason: rundir.EndTimeout, TraceID: fmt.Sprintf("%032x", 9), Fingerprint: "SELECT ?"}
	if s, ok := stuckEnded(&e, time.Second); !ok || s.Open || s.EndReason != rundir.EndTimeout || s.TraceID != e.TraceID {
		t.Errorf("ended stuck episode: %+v %v", s, ok)
	}
	e.HoldSeconds = 0.5
	if _, ok := stuckEnded(&e, time.Second); ok {
		t.Errorf("an episode under StuckAfter is listed")
	}
}

package probes

import (
	"math"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestLittleWindows: the hold is L/λ over the windows between reads of
// pg_stat_database, the first starting at the first sample (the
// baseline read); one ending in a reset and one with a failed read are
// left out and counted; the probe's own transactions are taken out.
func TestLittleWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var a littleAcc
	if a.hold() != nil {
		t.Fatal("a hold before any read of pg_stat_database")
	}
	// 3 backends busy throughout; 15 transactions a second of the
	// service's and 10 of the probe's: W = 3/15 = 0.2 s.
	db := func(i int) *rundir.DatabaseSample {
		switch i {
		case 30:
			return &rundir.DatabaseSample{Reset: true}
		}
		return &rundir.DatabaseSample{XactCommit: 24, XactRollback: 1, ProbeXacts: 10}
	}
	// The first sample is the sampler's baseline read: it records no
	// change, and the first window starts at it.
	a.add(&rundir.Sample{Time: t0.Add(-100 * time.Millisecond), States: rundir.StateCounts{Active: 3}})
	for i := range 60 { // a second each, ten samples to a second
		for j := range 10 {
			s := rundir.Sample{Time: t0.Add(time.Duration(10*i+j) * 100 * time.Millisecond), States: rundir.StateCounts{Active: 1, IdleInTx: 2, Idle: 5},
				Apps: []rundir.AppConns{{Name: "svc", StateCounts: rundir.StateCounts{Active: 1, IdleInTx: 2, Idle: 5}}}}
			if i == 45 && j == 3 {
				s = rundir.Sample{Time: s.Time, Gap: true}
			}
			if j == 9 {
				s.Database = db(i)
			}
			a.add(&s)
		}
	}
	h := a.hold()
	if h == nil || math.Abs(h.MeanSeconds-0.2) > 1e-9 || h.ExcludedReset != 1 || h.ExcludedGap != 1 || h.Windows != 58 {
		t.Fatalf("hold %+v, want 0.2 s over 58 windows, a reset and a gap left out", h)
	}
	if len(h.Apps) != 1 || h.Apps[0].BusyBackendsMean != 3 || h.Refused != "" {
		t.Errorf("apps %+v refused %q, want svc at 3", h.Apps, h.Refused)
	}
}

// TestHoldCounterReset: pg_stat_database's counters read back lower in
// the middle of a run (pg_stat_reset, a restart): the read is marked a
// reset, the window ending in it is left out and counted, and the hold
// rests on the other windows alone — which the reset's raw difference
// (negative) would have spoiled.
func TestHoldCounterReset(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s pgSampler
	var a littleAcc
	commit := int64(5000) // the counters as the database holds them
	for i := range 21 {   // 21 reads a second apart: 20 windows
		switch {
		case i == 12:
			commit = 7 // reset: the counters start again from nothing
		case i > 0:
			commit += 40 // 40 transactions a second
		}
		d := s.delta(dbCounters{commit: commit})
		if (d != nil && d.Reset) != (i == 12) {
			t.Fatalf("read %d: sample %+v; want a reset at read 12 only", i, d)
		}
		if i > 0 {
			// Ten samples a second, 4 backends busy throughout, the
			// last of them carrying the read of pg_stat_database.
			for j := 1; j < 10; j++ {
				a.add(&rundir.Sample{Time: t0.Add(time.Duration(10*(i-1)+j) * 100 * time.Millisecond), States: rundir.StateCounts{Active: 4}})
			}
		}
		a.add(&rundir.Sample{Time: t0.Add(time.Duration(i) * time.Second), States: rundir.StateCounts{Active: 4}, Database: d})
	}
	h := a.hold()
	if h == nil || h.ExcludedReset != 1 || h.Windows != 19 || h.Xacts != 19*40 {
		t.Fatalf("hold %+v; want 19 windows of 40 transactions, the reset's left out", h)
	}
	// W = L/λ = 4 / 40 = 0.1 s.
	if math.Abs(h.MeanSeconds-0.1) > 1e-9 {
		t.Errorf("hold %g s, want 0.1 s", h.MeanSeconds)
	}
}

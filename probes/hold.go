package probes

import (
	"cmp"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// littleAcc measures the hold as samples come, by Little's law: W = L/λ,
// with L the mean number of backends in a transaction and λ the
// transactions that ended per second. λ comes from pg_stat_database,
// read once a second, so the run is cut into windows between two of
// those reads; L is the mean of the samples in each window (ten at the
// default interval), weighted by the window's length.
//
// The first window starts at the first sample that read the server: that
// read is the sampler's baseline of pg_stat_database (it records no
// change). A window is left out, and counted as such, when its change is
// unknown (a counter went back: a statistics reset) and when a read of
// the server failed inside it (L would rest on part of it).
type littleAcc struct {
	started  bool      // the baseline was read: a window is open
	from     time.Time // its start: the last read of pg_stat_database
	gap      bool      // a read failed in it
	busySum  float64   // backends in a transaction, summed over its samples
	n        int       // its samples
	appSum   map[appKey]float64
	busySecs float64 // L·t summed over the windows counted
	appSecs  map[appKey]float64
	out      rundir.Hold
	seenDB   bool
}

type appKey struct {
	name      string
	byAddress bool
}

func busy(c rundir.StateCounts) int { return c.Active + c.IdleInTx + c.IdleInTxAborted }

func (a *littleAcc) add(s *rundir.Sample) {
	if s.Gap {
		a.gap = a.started
		return
	}
	if !a.started {
		// The first read of the server reads pg_stat_database too (the
		// sampler's baseline, which records no change): the first window
		// starts here.
		a.started, a.from = true, s.Time
		return
	}
	a.busySum += float64(busy(s.States))
	a.n++
	for _, app := range s.Apps {
		if b := busy(app.StateCounts); b > 0 {
			if a.appSum == nil {
				a.appSum = map[appKey]float64{}
			}
			a.appSum[appKey{app.Name, app.ByAddress}] += float64(b)
		}
	}
	d := s.Database
	if d == nil {
		return
	}
	a.seenDB = true
	switch {
	case d.Reset:
		a.out.ExcludedReset++
	case a.gap:
		a.out.ExcludedGap++
	case s.Time.After(a.from):
		secs := s.Time.Sub(a.from).Seconds()
		mean := a.busySum / float64(a.n)
		a.busySecs += mean * secs
		for k, v := range a.appSum {
			if a.appSecs == nil {
				a.appSecs = map[appKey]float64{}
			}
			a.appSecs[k] += v / float64(a.n) * secs
		}
		a.out.Windows++
		a.out.Seconds += secs
		a.out.Xacts += max(d.XactCommit+d.XactRollback-d.ProbeXacts, 0)
	}
	a.from, a.gap = s.Time, false
	a.busySum, a.n = 0, 0
	clear(a.appSum)
}

// hold returns the measure so far; nil when pg_stat_database was never
// read.
func (a *littleAcc) hold() *rundir.Hold {
	if !a.seenDB {
		return nil
	}
	h := a.out
	h.Method = rundir.HoldMethod
	h.Apps = nil
	switch {
	case h.Windows == 0:
		h.Refused = "no window between two reads of pg_stat_database was counted"
		return &h
	case h.Xacts == 0:
		h.BusyBackendsMean = a.busySecs / h.Seconds
		h.Refused = "no transaction of the service ended in the windows counted"
		return &h
	}
	h.BusyBackendsMean = a.busySecs / h.Seconds
	h.XactsPerSecond = float64(h.Xacts) / h.Seconds
	h.MeanSeconds = h.BusyBackendsMean / h.XactsPerSecond
	for k, v := range a.appSecs {
		h.Apps = append(h.Apps, rundir.AppBusy{Name: k.name, ByAddress: k.byAddress, BusyBackendsMean: v / h.Seconds})
	}
	slices.SortFunc(h.Apps, func(x, y rundir.AppBusy) int {
		return cmp.Or(cmp.Compare(y.BusyBackendsMean, x.BusyBackendsMean), cmp.Compare(x.Name, y.Name))
	})
	return &h
}

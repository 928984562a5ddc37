package derive

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// The database's view of each service's pool: most services expose no
// pool metrics and sit behind no PgBouncer leakbench can read, but the
// database still sees their connections — backends per application, by
// state, in every sample. A pool at its maximum with none of its
// connections working is pinned, whatever the stack.
//
// Pinned, precisely: the application has as many backends as it ever had
// in the run (its maximum), none of them active, and none of them has
// started or ended a statement since a moment at least the stuck
// threshold ago (the latest state_change among them) — while the load
// runs. The last condition keeps a healthy pool whose connections are
// idle between quick queries from counting, and the load window keeps a
// pool left idle at its size after the load from counting.
//
// Two more keep a connection that simply sits there from counting (a
// tool's idle session, a pool of one nobody uses): the application must
// have been seen working (a backend active or in a transaction at some
// sample), and the stretch must hurt — a backend idle in transaction at
// every sample of it, or requests of the load failing while it lasted.

// maxPinSpans bounds the pinned stretches kept per application (for the
// failures counted while pinned); the longest are kept.
const maxPinSpans = 256

// serviceAcc follows each application's backends a sample at a time.
type serviceAcc struct {
	stuckAfter float64
	from, to   time.Time // the load window; zero: the whole run
	apps       map[string]*appTrack
	// prev is the previous sample's time: a sample busy at the maximum
	// counts the time since it.
	prev time.Time
}

type appTrack struct {
	out rundir.ServiceConns
	// The stretch being followed: pinned since pinFrom as of pinLast,
	// every backend idle in transaction throughout (allIIT).
	pinning          bool
	pinFrom, pinLast time.Time
	allIIT, someIIT  bool
	spans            []pinSpan
	seen             bool // in the current sample
	worked           bool // a backend active or in a transaction at some sample
	// firstPinned is the start of the first stretch done counted as
	// pinned (Onsets).
	firstPinned time.Time
	// busyAtMax counts the load's samples at the maximum with every
	// backend busy, and their time; loadSamples the load's samples.
	busyAtMax        int
	busyAtMaxSeconds float64
	loadSamples      int
}

type pinSpan struct {
	from, to time.Time
	// allIIT: every backend idle in transaction at every sample; someIIT:
	// at least one, at every sample.
	allIIT, someIIT bool
}

func newServiceAcc(stuckAfter float64, from, to time.Time) *serviceAcc {
	if stuckAfter <= 0 {
		stuckAfter = 1
	}
	return &serviceAcc{stuckAfter: stuckAfter, from: from, to: to, apps: map[string]*appTrack{}}
}

func (acc *serviceAcc) inLoad(t time.Time) bool {
	return (acc.from.IsZero() || !t.Before(acc.from)) && (acc.to.IsZero() || !t.After(acc.to))
}

func (acc *serviceAcc) add(s *rundir.Sample) {
	if s.Gap {
		return // nothing was read: neither pinned nor not
	}
	for _, t := range acc.apps {
		t.seen = false
	}
	for _, a := range s.Apps {
		key := a.Name
		if a.ByAddress {
			key = "addr:" + a.Name
		}
		t := acc.apps[key]
		if t == nil {
			t = &appTrack{out: rundir.ServiceConns{Name: a.Name, ByAddress: a.ByAddress}}
			acc.apps[key] = t
		}
		t.seen = true
		acc.addApp(t, s.Time, a)
	}
	if acc.inLoad(s.Time) {
		for _, t := range acc.apps {
			t.loadSamples++
		}
	}
	acc.prev = s.Time
	for _, t := range acc.apps {
		if !t.seen {
			acc.closeStretch(t) // no backend at all: not pinned
		}
	}
}

func (acc *serviceAcc) addApp(t *appTrack, now time.Time, a rundir.AppConns) {
	total := a.Total()
	o := &t.out
	t.worked = t.worked || a.Active > 0 || a.IdleInTx+a.IdleInTxAborted > 0
	o.MaxIdleInTx = max(o.MaxIdleInTx, a.IdleInTx+a.IdleInTxAborted)
	if total > o.Max {
		// A new maximum: time pinned or busy at a lower level was not "at
		// its maximum".
		o.Max = total
		t.pinning, t.spans = false, nil
		t.busyAtMax, t.busyAtMaxSeconds = 0, 0
	}
	if total == o.Max && a.Active+a.IdleInTx+a.IdleInTxAborted == total && acc.inLoad(now) {
		t.busyAtMax++
		if !acc.prev.IsZero() {
			t.busyAtMaxSeconds += now.Sub(acc.prev).Seconds()
		}
	}
	pinned := total == o.Max && total > 0 && a.Active == 0 && !a.LastStateChange.IsZero() && acc.inLoad(now)
	if !pinned {
		acc.closeStretch(t)
		return
	}
	from := a.LastStateChange
	if !acc.from.IsZero() && from.Before(acc.from) {
		from = acc.from
	}
	iit := a.IdleInTx + a.IdleInTxAborted
	if !t.pinning || from.After(t.pinFrom) {
		// Some backend ran a statement since the stretch began: a new
		// one starts at that moment.
		acc.closeStretch(t)
		t.pinning, t.pinFrom, t.allIIT, t.someIIT = true, from, true, true
	}
	t.pinLast = now
	t.allIIT = t.allIIT && iit == total
	t.someIIT = t.someIIT && iit > 0
}

// closeStretch ends the stretch being followed, keeping it if it lasted
// the stuck threshold.
func (acc *serviceAcc) closeStretch(t *appTrack) {
	if !t.pinning {
		return
	}
	t.pinning = false
	if t.pinLast.Sub(t.pinFrom).Seconds() < acc.stuckAfter {
		return
	}
	t.spans = append(t.spans, pinSpan{t.pinFrom, t.pinLast, t.allIIT, t.someIIT})
	if len(t.spans) > maxPinSpans {
		slices.SortFunc(t.spans, func(x, y pinSpan) int { return cmp.Compare(y.to.Sub(y.from), x.to.Sub(x.from)) })
		t.spans = t.spans[:maxPinSpans]
		slices.SortFunc(t.spans, func(x, y pinSpan) int { return x.from.Compare(y.from) })
	}
}

// done returns the applications seen, the pinned ones first, then by
// their maximum; load's per-second points count the requests that ended
// while each was pinned.
func (acc *serviceAcc) done(load []rundir.LoadPoint) []rundir.ServiceConns {
	if len(acc.apps) == 0 {
		return nil
	}
	out := make([]rundir.ServiceConns, 0, len(acc.apps))
	for _, t := range acc.apps {
		acc.closeStretch(t)
		o := t.out
		var kept []pinSpan
		for _, sp := range t.spans {
			if !t.worked {
				break // never seen working: a connection that sits there
			}
			if _, failed := requestsDuring(load, []pinSpan{sp}); !sp.someIIT && failed == 0 {
				continue // no transaction held, nothing failed: it hurt no one
			}
			kept = append(kept, sp)
			d := sp.to.Sub(sp.from).Seconds()
			if t.firstPinned.IsZero() || sp.from.Before(t.firstPinned) {
				t.firstPinned = sp.from
			}
			o.PinnedSeconds += d
			o.PinnedSpans++
			if d > o.LongestPinnedSeconds {
				o.LongestPinnedSeconds, o.PinnedFrom, o.PinnedAllIdleInTx = d, sp.from, sp.allIIT
			}
		}
		// Over the kept spans together: a second of load.jsonl that two
		// spans share (a sample between them saw the pool let go for a
		// moment) counts once, so that these never exceed the run's own.
		o.RequestsWhilePinned, o.FailuresWhilePinned = requestsDuring(load, kept)
		o.Pinned = o.PinnedSpans > 0
		if t.busyAtMax > 0 && t.loadSamples > 0 {
			o.BusyAtMaxSeconds, o.LoadSamples = t.busyAtMaxSeconds, t.loadSamples
			o.BusyAtMaxShare = float64(t.busyAtMax) / float64(t.loadSamples)
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y rundir.ServiceConns) int {
		return cmp.Or(cmp.Compare(y.PinnedSeconds, x.PinnedSeconds), cmp.Compare(y.Max, x.Max), cmp.Compare(x.Name, y.Name))
	})
	return out
}

// firstPinned is when the first stretch done counted as pinned began, of
// any application (zero: none); after done.
func (acc *serviceAcc) firstPinned() time.Time {
	var first time.Time
	for _, t := range acc.apps {
		if !t.firstPinned.IsZero() && (first.IsZero() || t.firstPinned.Before(first)) {
			first = t.firstPinned
		}
	}
	return first
}

// requestsDuring counts the requests and failures of the seconds of load
// that overlap one of spans (a point covers the second before its time).
func requestsDuring(load []rundir.LoadPoint, spans []pinSpan) (requests, failures int64) {
	for _, p := range load {
		for _, sp := range spans {
			if p.Time.After(sp.from) && p.Time.Add(-time.Second).Before(sp.to) {
				requests += p.Requests
				failures += p.Failures
				break
			}
		}
	}
	return requests, failures
}

// PinnedService is the application pinned longest, nil when none was.
func PinnedService(services []rundir.ServiceConns) *rundir.ServiceConns {
	if len(services) > 0 && services[0].Pinned {
		return &services[0]
	}
	return nil
}

// PinnedPhrase says what was pinned, for the verdict and the checks:
// "pyservice's connections pinned at 10 for 27.4 s (all idle in
// transaction; 212 of 450 requests failed meanwhile)".
func PinnedPhrase(c *rundir.ServiceConns) string {
	who := c.Name
	if c.ByAddress {
		who = "the clients at " + c.Name
	}
	state := "none working"
	if c.PinnedAllIdleInTx {
		state = "all idle in transaction"
	}
	s := fmt.Sprintf("%s's connections pinned at %d for %s (%s", who, c.Max, format.Seconds(c.PinnedSeconds), state)
	if c.RequestsWhilePinned > 0 {
		s += fmt.Sprintf("; %d of %d requests failed meanwhile", c.FailuresWhilePinned, c.RequestsWhilePinned)
	}
	return s + ")"
}

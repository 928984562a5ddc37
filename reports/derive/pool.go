// Package derive computes what summary.json says that the run's records
// show but no component wrote down: the verdict on the connection pools
// (PoolState, with each service's pinned stretches as the database saw
// them), when each verdict first held (Onsets), whether the run was
// saturated (Forensics), and the summary of a run killed before it wrote
// one (Rebuilder); Worst keeps the episodes held longest. Each takes the
// probe's records one at a time, as they are read, so that memory does not
// grow with the run:
//
//	p := derive.NewPool(summary)
//	_, err := jsonl.Each(samplesFile, -1, p.Add)
//	summary.Pool = p.Done(derive.Interval(summary, p.Count(), first, last), load)
package derive

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// MinExhaustedSeconds is how long a pool must stay saturated (or have
// clients queued) before the report calls it exhausted: a single sample
// with a client queued for a few milliseconds is a pool doing its job.
const MinExhaustedSeconds = 1.0

// ReadPool streams dir's samples.jsonl and judges the pools of the run
// whose summary is s, as LoadRun does; p is nil without samples, and the
// error is a file that could not be read.
func ReadPool(dir string, s *rundir.Summary) (acc *Pool, p *rundir.PoolState, err error) {
	f, err := os.Open(filepath.Join(dir, rundir.SamplesFile))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	acc = NewPool(s)
	if _, err := jsonl.Each(f, -1, acc.Add); err != nil {
		return nil, nil, err
	}
	if acc.n == 0 {
		return acc, nil, nil
	}
	p = acc.Done(Interval(s, acc.n, acc.firstTime, acc.lastTime), readLoadPoints(dir))
	p.PinnedAllowed = PinnedAllowed(dir)
	return acc, p, nil
}

// ForensicsFromDir sets s.Forensics from dir's episodes.jsonl (and
// requests.jsonl), streaming the files: only stuck episodes are kept, and
// of the request index only the records the stuck episodes name. Without
// episodes.jsonl s.Forensics stays as it is.
func ForensicsFromDir(dir string, s *rundir.Summary) {
	f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		return
	}
	defer f.Close()
	fb := forensics.New(dir, s.Probe)
	_, _ = jsonl.Each(f, -1, fb.Add) // a damaged file has the forensics of what it holds
	s.Forensics = Forensics(fb, s)
}

// Forensics is fb's forensics of the run whose summary is s, and
// whether the run was saturated: s.Pool must be derived already.
func Forensics(fb *forensics.Builder, s *rundir.Summary) *rundir.Forensics {
	f := fb.Finish()
	saturation(f, s)
	return f
}

// saturation says whether the run ran at its limit: the pool exhausted
// (the report's own verdict), or arrival-rate iterations dropped: due
// when no user was free, or reached by their user only after the
// scenario's end (the engine counts both; either means the generator
// fell behind its schedule, so the reason names no single cause).
func saturation(f *rundir.Forensics, s *rundir.Summary) {
	switch {
	case s.Pool != nil && s.Pool.Exhausted:
		f.Saturated, f.SaturatedReason = true, s.Pool.Reason
	case s.Load != nil && s.Load.DroppedIterations > 0:
		f.Saturated, f.SaturatedReason = true, fmt.Sprintf("%d arrival-rate iterations dropped (no free user in time)", s.Load.DroppedIterations)
	}
	if f.Saturated && s.Load != nil {
		if all, ok := s.Load.Latency["all"]; ok && all.Count > 0 {
			f.SaturatedReason += fmt.Sprintf("; request latency p95 %s", format.Seconds(all.P95Ms/1000))
		}
	}
}

// Interval is the probe's interval as the summary says it, else as n
// samples from first to last show it.
func Interval(s *rundir.Summary, n int, first, last time.Time) float64 {
	if s.Probe != nil && s.Probe.IntervalSeconds > 0 {
		return s.Probe.IntervalSeconds
	}
	if n > 1 {
		return last.Sub(first).Seconds() / float64(n-1)
	}
	return 1
}

// spell measures the longest run of consecutive samples for which a
// condition holds, a sample at a time: from its first sample to the first
// sample after it (or one interval past the last sample). Runs of one
// sample do not count.
//
// It also keeps the start of the first run that lasted MinExhaustedSeconds
// (first): when the pool first counted as exhausted, which a capacity
// stage orders its limits by (Onsets).
type spell struct {
	longest     float64
	open        bool
	n           int
	start, last time.Time
	first       time.Time
}

func (sp *spell) add(t time.Time, cond bool) {
	switch {
	case cond && !sp.open:
		sp.open, sp.n, sp.start = true, 0, t
		fallthrough
	case cond:
		sp.n++
		sp.last = t
	case sp.open:
		if sp.n >= 2 {
			sp.ran(t.Sub(sp.start).Seconds())
		}
		sp.open = false
	}
}

// ran notes a run of d seconds that began at sp.start.
func (sp *spell) ran(d float64) {
	sp.longest = max(sp.longest, d)
	if sp.first.IsZero() && d >= MinExhaustedSeconds {
		sp.first = sp.start
	}
}

// done is the longest run, one still going ending interval past its last
// sample.
func (sp *spell) done(interval float64) float64 {
	if sp.open && sp.n >= 2 {
		sp.ran(sp.last.Sub(sp.start).Seconds() + interval)
		sp.open = false
	}
	return sp.longest
}

// PoolState judges the pools of the run whose summary is s from its
// samples (and its load's per-second points, for the requests that failed
// while a service was pinned).
func PoolState(s *rundir.Summary, samples []rundir.Sample, load []rundir.LoadPoint, interval float64) *rundir.PoolState {
	acc := NewPool(s)
	for i := range samples {
		acc.Add(&samples[i])
	}
	return acc.Done(interval, load)
}

// PinnedAllowed: dir's profile allows a pinned pool (probe.allow_pinned).
func PinnedAllowed(dir string) bool {
	c, err := rundir.ReadConfig(dir)
	return err == nil && c.Profile.Probe.AllowPinned
}

// readLoadPoints reads dir's load.jsonl, nil when there is none: a point a
// second, small for any run.
func readLoadPoints(dir string) []rundir.LoadPoint {
	f, err := os.Open(filepath.Join(dir, rundir.LoadFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	var points []rundir.LoadPoint
	_, _ = jsonl.Read(f, &points) // a torn last line: the points before it
	return points
}

// NewPool is an empty Pool for the run whose summary is s: its
// stuck threshold and load window decide when a service is pinned.
func NewPool(s *rundir.Summary) *Pool {
	stuckAfter := 1.0
	if s.Probe != nil && s.Probe.StuckAfterSeconds > 0 {
		stuckAfter = s.Probe.StuckAfterSeconds
	}
	var from, to time.Time
	if s.Load != nil {
		from, to = s.Load.Started, s.Load.Ended
	}
	return &Pool{svc: newServiceAcc(stuckAfter, from, to)}
}

// Pool is PoolState a sample at a time: Add each sample, then Done.
type Pool struct {
	svc                 *serviceAcc
	p                   rundir.PoolState
	n                   int
	firstTime, lastTime time.Time
	waiting, saturated  spell
	apps                int
	firstApp, lastApp   time.Time
	first, last         rundir.AppPoolSample
	// on is when each verdict first held (Onsets); done completes it.
	on Onsets
}

// Count is how many samples the pool was given.
func (acc *Pool) Count() int { return acc.n }

// Span is the time of the first and the last sample given.
func (acc *Pool) Span() (first, last time.Time) { return acc.firstTime, acc.lastTime }

// Add takes the next sample.
func (acc *Pool) Add(s *rundir.Sample) {
	p := &acc.p
	if acc.n == 0 {
		acc.firstTime = s.Time
	}
	acc.n++
	acc.lastTime = s.Time
	if !s.Gap {
		c := s.States
		p.MaxClientBackends = max(p.MaxClientBackends, c.Active+c.Idle+c.IdleInTx+c.IdleInTxAborted+c.Other)
	}
	if b := s.PgBouncer; b != nil {
		p.PgBouncerSampled = true
		p.PgBouncerMaxClWaiting = max(p.PgBouncerMaxClWaiting, b.ClWaiting)
		p.WorstWaitSeconds = max(p.WorstWaitSeconds, b.MaxWaitSeconds)
		if b.MaxWaitSeconds >= MinExhaustedSeconds && acc.on.longWait.IsZero() {
			acc.on.longWait = s.Time
		}
		acc.waiting.add(s.Time, b.ClWaiting > 0)
	}
	if a := s.AppPool; a != nil {
		p.AppPoolSampled = true
		p.AppPoolMax = max(p.AppPoolMax, a.Max)
		p.AppPoolMaxAcquired = max(p.AppPoolMaxAcquired, a.Acquired)
		acc.saturated.add(s.Time, a.Max > 0 && a.Acquired >= a.Max)
		if acc.apps == 0 {
			acc.first, acc.firstApp = *a, s.Time
		}
		acc.apps++
		acc.last, acc.lastApp = *a, s.Time
	}
	acc.svc.add(s)
	acc.on.addStuck(s)
}

// Done is the verdict on the pools, interval being the probe's and load
// load.jsonl's points.
func (acc *Pool) Done(interval float64, load []rundir.LoadPoint) *rundir.PoolState {
	p := acc.p
	p.PgBouncerWaitingSeconds = acc.waiting.done(interval)
	if acc.apps > 1 {
		// The service pool is scraped less often than the probe samples.
		p.AppPoolSaturatedSeconds = acc.saturated.done(acc.lastApp.Sub(acc.firstApp).Seconds() / float64(acc.apps-1))
	}
	if acc.apps > 0 {
		first, last := &acc.first, &acc.last
		p.AppPoolAcquireWaits = max(0, last.AcquireWaitsTotal-first.AcquireWaitsTotal)
		p.AppPoolAcquireWaitSeconds = max(0, last.AcquireWaitSecondsTotal-first.AcquireWaitSecondsTotal)
		p.AppPoolCanceledAcquires = max(0, last.CanceledAcquiresTotal-first.CanceledAcquiresTotal)
		p.AppPoolUnclosedSessions = last.UnclosedSessions
	}
	p.Services = acc.svc.done(load)
	pinned := PinnedService(p.Services)
	p.Pinned = pinned != nil
	switch {
	case p.AppPoolSaturatedSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("service pool at its max (%g/%g) for %s", p.AppPoolMaxAcquired, p.AppPoolMax, format.Seconds(p.AppPoolSaturatedSeconds))
		p.JudgedFrom = "service pool metrics"
	case p.PgBouncerWaitingSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("PgBouncer clients queued for %s (up to %d at once)", format.Seconds(p.PgBouncerWaitingSeconds), p.PgBouncerMaxClWaiting)
		p.JudgedFrom = "PgBouncer"
	case p.WorstWaitSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("a PgBouncer client waited %s", format.Seconds(p.WorstWaitSeconds))
		p.JudgedFrom = "PgBouncer"
	case pinned != nil && !p.PgBouncerSampled && !p.AppPoolSampled:
		// Neither PgBouncer nor the service's metrics were there to ask:
		// the database's view is the evidence, and the reason says so.
		p.Reason = PinnedPhrase(pinned) + " — judged from the database's view (no PgBouncer or pool metrics sampled)"
		p.JudgedFrom = "database view"
	}
	p.Exhausted = p.Reason != ""
	acc.on.done(&p, acc.saturated.first, acc.waiting.first, acc.svc.firstPinned())
	return &p
}

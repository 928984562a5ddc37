package reports

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/forensics"
)

// MinExhaustedSeconds is how long a pool must stay saturated (or have
// clients queued) before the report calls it exhausted: a single sample
// with a client queued for a few milliseconds is a pool doing its job.
const MinExhaustedSeconds = 1.0

// derivePool sets s.Pool from dir's samples.jsonl, as LoadRun does, so
// that a summary written before the report is rendered already says
// whether a pool ran dry. Without samples s.Pool stays as it is. The
// samples are read as a stream.
func derivePool(dir string, s *Summary) {
	if _, p, err := readPool(dir, s); err == nil && p != nil {
		s.Pool = p
	}
	deriveForensics(&Run{Dir: dir, Summary: s})
}

// readPool streams dir's samples.jsonl and judges the pools of the run
// whose summary is s, as LoadRun does; p is nil without samples, and the
// error is a file that could not be read.
func readPool(dir string, s *Summary) (acc *poolAcc, p *PoolState, err error) {
	f, err := os.Open(filepath.Join(dir, rundir.SamplesFile))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	acc = newPoolAcc(s)
	if _, err := jsonl.Each(f, -1, acc.add); err != nil {
		return nil, nil, err
	}
	if acc.n == 0 {
		return acc, nil, nil
	}
	p = acc.done(intervalFrom(s, acc.n, acc.firstTime, acc.lastTime), readLoadPoints(dir))
	p.PinnedAllowed = pinnedAllowedBy(dir)
	return acc, p, nil
}

// deriveForensicsFromDir sets s.Forensics from dir's episodes.jsonl (and
// requests.jsonl), streaming the files: only stuck episodes are kept, and
// of the request index only the records the stuck episodes name. Without
// episodes.jsonl s.Forensics stays as it is.
func deriveForensicsFromDir(dir string, s *Summary) {
	f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		return
	}
	defer f.Close()
	fb := forensics.New(dir, s.Probe)
	_, _ = jsonl.Each(f, -1, fb.Add) // a damaged file has the forensics of what it holds
	s.Forensics = finishForensics(fb, s)
}

// deriveForensics sets r.Summary.Forensics from the episodes read.
func deriveForensics(r *Run) {
	if len(r.Episodes) == 0 && r.Summary.Probe == nil {
		return
	}
	fb := forensics.New(r.Dir, r.Summary.Probe)
	for i := range r.Episodes {
		fb.Add(&r.Episodes[i])
	}
	r.Summary.Forensics = finishForensics(fb, r.Summary)
}

// finishForensics is fb's forensics of the run whose summary is s, and
// whether the run was saturated: s.Pool must be derived already.
func finishForensics(fb *forensics.Builder, s *Summary) *Forensics {
	f := fb.Finish()
	saturation(f, s)
	return f
}

// saturation says whether the run ran at its limit: the pool exhausted
// (the report's own verdict), or arrival-rate iterations dropped for want
// of a free user.
func saturation(f *Forensics, s *Summary) {
	switch {
	case s.Pool != nil && s.Pool.Exhausted:
		f.Saturated, f.SaturatedReason = true, s.Pool.Reason
	case s.Load != nil && s.Load.DroppedIterations > 0:
		f.Saturated, f.SaturatedReason = true, fmt.Sprintf("%d arrival-rate iterations dropped (no free user)", s.Load.DroppedIterations)
	}
	if f.Saturated && s.Load != nil {
		if all, ok := s.Load.Latency["all"]; ok && all.Count > 0 {
			f.SaturatedReason += fmt.Sprintf("; request latency p95 %s", seconds(all.P95Ms/1000))
		}
	}
}

// derive fills what the report computes from the time series.
func derive(r *Run) {
	if len(r.Samples) > 0 {
		r.Summary.Pool = poolState(r.Summary, r.Samples, r.Load, intervalOf(r))
	}
	deriveForensics(r) // after the pool: it reads Summary.Pool
}

func intervalOf(r *Run) float64 {
	if len(r.Samples) == 0 {
		return intervalFrom(r.Summary, 0, time.Time{}, time.Time{})
	}
	return intervalFrom(r.Summary, r.sampleCount(), r.Samples[0].Time, r.Samples[len(r.Samples)-1].Time)
}

// intervalFrom is the probe's interval as the summary says it, else as n
// samples from first to last show it.
func intervalFrom(s *Summary, n int, first, last time.Time) float64 {
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

// poolState judges the pools of the run whose summary is s from its
// samples (and its load's per-second points, for the requests that failed
// while a service was pinned).
func poolState(s *Summary, samples []Sample, load []rundir.LoadPoint, interval float64) *PoolState {
	acc := newPoolAcc(s)
	for i := range samples {
		acc.add(&samples[i])
	}
	return acc.done(interval, load)
}

// pinnedAllowedBy: dir's profile allows a pinned pool (probe.allow_pinned).
func pinnedAllowedBy(dir string) bool {
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

// newPoolAcc is an empty poolAcc for the run whose summary is s: its
// stuck threshold and load window decide when a service is pinned.
func newPoolAcc(s *Summary) *poolAcc {
	stuckAfter := 1.0
	if s.Probe != nil && s.Probe.StuckAfterSeconds > 0 {
		stuckAfter = s.Probe.StuckAfterSeconds
	}
	var from, to time.Time
	if s.Load != nil {
		from, to = s.Load.Started, s.Load.Ended
	}
	return &poolAcc{svc: newServiceAcc(stuckAfter, from, to)}
}

// poolAcc is poolState a sample at a time.
type poolAcc struct {
	svc                 *serviceAcc
	p                   PoolState
	n                   int
	firstTime, lastTime time.Time
	waiting, saturated  spell
	apps                int
	firstApp, lastApp   time.Time
	first, last         AppPoolSample
	// on is when each verdict first held (Onsets); done completes it.
	on Onsets
}

func (acc *poolAcc) add(s *Sample) {
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

func (acc *poolAcc) done(interval float64, load []rundir.LoadPoint) *PoolState {
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
	pinned := pinnedService(p.Services)
	p.Pinned = pinned != nil
	switch {
	case p.AppPoolSaturatedSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("service pool at its max (%g/%g) for %s", p.AppPoolMaxAcquired, p.AppPoolMax, seconds(p.AppPoolSaturatedSeconds))
		p.JudgedFrom = "service pool metrics"
	case p.PgBouncerWaitingSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("PgBouncer clients queued for %s (up to %d at once)", seconds(p.PgBouncerWaitingSeconds), p.PgBouncerMaxClWaiting)
		p.JudgedFrom = "PgBouncer"
	case p.WorstWaitSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("a PgBouncer client waited %s", seconds(p.WorstWaitSeconds))
		p.JudgedFrom = "PgBouncer"
	case pinned != nil && !p.PgBouncerSampled && !p.AppPoolSampled:
		// Neither PgBouncer nor the service's metrics were there to ask:
		// the database's view is the evidence, and the reason says so.
		p.Reason = pinnedPhrase(pinned) + " — judged from the database's view (no PgBouncer or pool metrics sampled)"
		p.JudgedFrom = "database view"
	}
	p.Exhausted = p.Reason != ""
	acc.on.done(&p, acc.saturated.first, acc.waiting.first, acc.svc.firstPinned())
	return &p
}

// rebuilder makes the summary of a run that never wrote one, from
// config.json and the probe's files, a record at a time.
type rebuilder struct {
	s           *Summary
	sum         *probes.Summarizer
	records     bool
	first, last time.Time
}

func newRebuilder(dir string, old *Summary) *rebuilder {
	s := &Summary{SchemaVersion: SchemaVersion, EndReason: EndIncomplete, Incomplete: true,
		Error: "the run did not finish: no " + rundir.SummaryFile + " (killed?)"}
	if old != nil {
		s.Name, s.Profile, s.Environment, s.Load = old.Name, old.Profile, old.Environment, old.Load
	}
	stuckAfter, timeout, interval := 1.0, 0.0, 0.0
	if c, err := rundir.ReadConfig(dir); err == nil {
		s.Name = cmp.Or(s.Name, c.Name)
		s.Profile = cmp.Or(s.Profile, c.Profile.Name)
		e := &s.Environment
		e.Variant = cmp.Or(e.Variant, c.Variant)
		e.LeakbenchVersion = cmp.Or(e.LeakbenchVersion, c.Version)
		st := c.StackFacts()
		e.IdleInTxTimeoutSeconds = st.IdleInTxTimeout.Seconds()
		e.MaxConnections, e.PoolMode = st.MaxConnections, st.PoolMode
		e.PgBouncerPoolSize, e.GatewayPoolSize = st.PgBouncerPoolSize, st.GatewayPoolSize
		if v := c.Profile.Probe.StuckAfter.Seconds(); v > 0 {
			stuckAfter = v
		}
		timeout, interval = st.IdleInTxTimeout.Seconds(), c.Profile.Probe.Interval.Seconds()
	}
	// The probe's own summarizer, so a killed run's column reads the same
	// as a finished one's.
	sum := probes.NewSummarizer(probes.Config{Interval: secondsToDuration(interval), StuckAfter: secondsToDuration(stuckAfter)},
		secondsToDuration(timeout))
	return &rebuilder{s: s, sum: sum}
}

// probe is the probe summary the rebuilt summary will have, as far as it
// does not depend on the records (its settings).
func (b *rebuilder) probe() *probes.Summary {
	ps := b.sum.Summary()
	return &ps
}

// at notes a record's time: the run's span is the earliest and latest.
func (b *rebuilder) at(t time.Time) {
	if t.IsZero() {
		return
	}
	if b.first.IsZero() || t.Compare(b.first) < 0 {
		b.first = t
	}
	if b.last.IsZero() || t.Compare(b.last) > 0 {
		b.last = t
	}
}

func (b *rebuilder) addSample(x *Sample) {
	b.records = true
	b.at(x.Time)
	b.sum.AddSample(*x)
}

func (b *rebuilder) addEpisode(e *probes.Episode) {
	b.records = true
	b.at(e.Start)
	b.at(e.End)
	b.sum.AddEpisode(*e)
}

// done is the summary, load.jsonl's points being load.
func (b *rebuilder) done(load []rundir.LoadPoint) *Summary {
	s := b.s
	for _, l := range load {
		b.at(l.Time)
	}
	if !b.first.IsZero() {
		s.Started, s.Ended = b.first, b.last
	}
	if b.records {
		ps := b.sum.Summary()
		s.Probe = &ps
	}
	if len(load) > 0 {
		s.Load = partialLoad(load)
	}
	return s
}

// rebuildSummary makes the summary of a run read into memory that never
// wrote one.
func rebuildSummary(r *Run) *Summary {
	b := newRebuilder(r.Dir, r.Summary)
	for i := range r.Samples {
		b.addSample(&r.Samples[i])
	}
	for i := range r.Episodes {
		b.addEpisode(&r.Episodes[i])
	}
	return b.done(r.Load)
}

func secondsToDuration(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// partialLoad sums load.jsonl into the engine's result shape; latency
// percentiles cannot be merged from per-second ones and stay absent.
func partialLoad(points []rundir.LoadPoint) *rundir.LoadResult {
	res := &rundir.LoadResult{Started: points[0].Time, Ended: points[len(points)-1].Time,
		ErrorsByKind: map[string]int64{}, Latency: map[string]rundir.LatencyStats{}, Interrupted: true}
	if d := points[0].ElapsedSeconds; d > 0 {
		res.Started = res.Started.Add(-time.Duration(d * float64(time.Second)))
	}
	for _, l := range points {
		res.Requests += l.Requests
		res.Failures += l.Failures
		res.Iterations += l.Iterations
		res.PeakUsers = max(res.PeakUsers, int(l.ActiveUsers))
	}
	return res
}

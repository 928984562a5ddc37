package derive

import (
	"cmp"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
)

// Rebuilder makes the summary of a run that never wrote one, from
// config.json and the probe's files, a record at a time.
type Rebuilder struct {
	s           *rundir.Summary
	sum         *probes.Summarizer
	records     bool
	first, last time.Time
}

// NewRebuilder is the Rebuilder of the run in dir; old is the summary it
// has, if any (an incomplete one).
func NewRebuilder(dir string, old *rundir.Summary) *Rebuilder {
	s := &rundir.Summary{SchemaVersion: rundir.SchemaVersion, EndReason: rundir.EndIncomplete, Incomplete: true,
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
	return &Rebuilder{s: s, sum: sum}
}

// Probe is the probe summary the rebuilt summary will have, as far as it
// does not depend on the records (its settings).
func (b *Rebuilder) Probe() *rundir.ProbeSummary {
	ps := b.sum.Summary()
	return &ps
}

// at notes a record's time: the run's span is the earliest and latest.
func (b *Rebuilder) at(t time.Time) {
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

// AddSample takes the next sample of samples.jsonl.
func (b *Rebuilder) AddSample(x *rundir.Sample) {
	b.records = true
	b.at(x.Time)
	b.sum.AddSample(*x)
}

// AddEpisode takes the next episode of episodes.jsonl.
func (b *Rebuilder) AddEpisode(e *rundir.Episode) {
	b.records = true
	b.at(e.Start)
	b.at(e.End)
	b.sum.AddEpisode(*e)
}

// Done is the summary, load.jsonl's points being load.
func (b *Rebuilder) Done(load []rundir.LoadPoint) *rundir.Summary {
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

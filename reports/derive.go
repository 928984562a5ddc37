package reports

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
)

// MinExhaustedSeconds is how long a pool must stay saturated (or have
// clients queued) before the report calls it exhausted: a single sample
// with a client queued for a few milliseconds is a pool doing its job.
const MinExhaustedSeconds = 1.0

// derivePool sets s.Pool from dir's samples.jsonl, as LoadRun does, so
// that a summary written before the report is rendered already says
// whether a pool ran dry. Without samples s.Pool stays as it is.
func derivePool(dir string, s *Summary) {
	f, err := os.Open(filepath.Join(dir, rundir.SamplesFile))
	if err != nil {
		return
	}
	defer f.Close()
	r := &Run{Dir: dir, Summary: s}
	if _, err := readJSONL(f, &r.Samples); err == nil {
		derive(r)
	}
}

// derive fills what the report computes from the time series.
func derive(r *Run) {
	if len(r.Samples) > 0 {
		r.Summary.Pool = poolState(r.Samples, intervalOf(r))
	}
	deriveForensics(r) // after the pool: it reads Summary.Pool
}

func intervalOf(r *Run) float64 {
	if r.Summary.Probe != nil && r.Summary.Probe.IntervalSeconds > 0 {
		return r.Summary.Probe.IntervalSeconds
	}
	if n := len(r.Samples); n > 1 {
		return r.Samples[n-1].Time.Sub(r.Samples[0].Time).Seconds() / float64(n-1)
	}
	return 1
}

// spells measures the longest run of consecutive samples for which cond
// holds, from its first sample to the first sample after it (or one
// interval past the last sample). Runs of one sample do not count.
func spells(times []time.Time, cond []bool, interval float64) (longest float64) {
	for i := 0; i < len(cond); {
		if !cond[i] {
			i++
			continue
		}
		j := i
		for j < len(cond) && cond[j] {
			j++
		}
		var d float64
		if j < len(cond) {
			d = times[j].Sub(times[i]).Seconds()
		} else {
			d = times[j-1].Sub(times[i]).Seconds() + interval
		}
		if j-i >= 2 {
			longest = max(longest, d)
		}
		i = j
	}
	return longest
}

func poolState(samples []Sample, interval float64) *PoolState {
	p := &PoolState{}
	var bt, at []time.Time
	var bc, ac []bool
	var first, last *AppPoolSample
	for i := range samples {
		s := &samples[i]
		if b := s.PgBouncer; b != nil {
			p.PgBouncerSampled = true
			p.PgBouncerMaxClWaiting = max(p.PgBouncerMaxClWaiting, b.ClWaiting)
			p.WorstWaitSeconds = max(p.WorstWaitSeconds, b.MaxWaitSeconds)
			bt, bc = append(bt, s.Time), append(bc, b.ClWaiting > 0)
		}
		if a := s.AppPool; a != nil {
			p.AppPoolSampled = true
			p.AppPoolMax = max(p.AppPoolMax, a.Max)
			p.AppPoolMaxAcquired = max(p.AppPoolMaxAcquired, a.Acquired)
			at, ac = append(at, s.Time), append(ac, a.Max > 0 && a.Acquired >= a.Max)
			if first == nil {
				first = a
			}
			last = a
		}
	}
	p.PgBouncerWaitingSeconds = spells(bt, bc, interval)
	if len(at) > 1 {
		// The service pool is scraped less often than the probe samples.
		p.AppPoolSaturatedSeconds = spells(at, ac, at[len(at)-1].Sub(at[0]).Seconds()/float64(len(at)-1))
	}
	if last != nil {
		p.AppPoolAcquireWaits = max(0, last.AcquireWaitsTotal-first.AcquireWaitsTotal)
		p.AppPoolAcquireWaitSeconds = max(0, last.AcquireWaitSecondsTotal-first.AcquireWaitSecondsTotal)
		p.AppPoolCanceledAcquires = max(0, last.CanceledAcquiresTotal-first.CanceledAcquiresTotal)
		p.AppPoolUnclosedSessions = last.UnclosedSessions
	}
	switch {
	case p.AppPoolSaturatedSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("service pool at its max (%g/%g) for %s", p.AppPoolMaxAcquired, p.AppPoolMax, seconds(p.AppPoolSaturatedSeconds))
	case p.PgBouncerWaitingSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("PgBouncer clients queued for %s (up to %d at once)", seconds(p.PgBouncerWaitingSeconds), p.PgBouncerMaxClWaiting)
	case p.WorstWaitSeconds >= MinExhaustedSeconds:
		p.Reason = fmt.Sprintf("a PgBouncer client waited %s", seconds(p.WorstWaitSeconds))
	}
	p.Exhausted = p.Reason != ""
	return p
}

// rebuildSummary makes the summary of a run that never wrote one, from
// config.json and the probe's files.
func rebuildSummary(r *Run) *Summary {
	s := &Summary{SchemaVersion: SchemaVersion, EndReason: EndIncomplete, Incomplete: true,
		Error: "the run did not finish: no " + rundir.SummaryFile + " (killed?)"}
	if old := r.Summary; old != nil {
		s.Name, s.Profile, s.Environment, s.Load = old.Name, old.Profile, old.Environment, old.Load
	}
	stuckAfter, timeout, interval := 1.0, 0.0, 0.0
	if c, err := rundir.ReadConfig(r.Dir); err == nil {
		s.Name = cmp.Or(s.Name, c.Name)
		s.Profile = cmp.Or(s.Profile, c.Profile.Name)
		e := &s.Environment
		e.Variant = cmp.Or(e.Variant, c.Variant)
		e.LeakbenchVersion = cmp.Or(e.LeakbenchVersion, c.Version)
		e.IdleInTxTimeoutSeconds = c.Stack.IdleInTxTimeout.Seconds()
		e.MaxConnections, e.PoolMode = c.Stack.MaxConnections, c.Stack.PoolMode
		e.PgBouncerPoolSize, e.GatewayPoolSize = c.Stack.PgBouncerPoolSize, c.Stack.GatewayPoolSize
		if v := c.Profile.Probe.StuckAfter.Seconds(); v > 0 {
			stuckAfter = v
		}
		timeout, interval = c.Stack.IdleInTxTimeout.Seconds(), c.Profile.Probe.Interval.Seconds()
	}
	var times []time.Time
	for _, x := range r.Samples {
		times = append(times, x.Time)
	}
	for _, e := range r.Episodes {
		times = append(times, e.Start, e.End)
	}
	for _, l := range r.Load {
		times = append(times, l.Time)
	}
	times = slices.DeleteFunc(times, time.Time.IsZero)
	if len(times) > 0 {
		s.Started, s.Ended = slices.MinFunc(times, time.Time.Compare), slices.MaxFunc(times, time.Time.Compare)
	}
	if len(r.Samples) > 0 || len(r.Episodes) > 0 {
		// The probe's own summarizer, so a killed run's column reads the
		// same as a finished one's.
		ps := probes.Summarize(probes.Config{Interval: secondsToDuration(interval), StuckAfter: secondsToDuration(stuckAfter)},
			secondsToDuration(timeout), r.Samples, r.Episodes)
		s.Probe = &ps
	}
	if len(r.Load) > 0 {
		s.Load = partialLoad(r.Load)
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

package derive

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Onsets are when a run's pool verdicts first held, read from the probe's
// samples by the same accumulator that makes the verdicts (PoolState), so
// that the two never disagree: a capacity stage orders the limits it
// broke by them (package capacity). A zero time: the verdict did not hold.
// Each time is a moment the samples recorded, never one between them.
type Onsets struct {
	// Exhausted is when the pool first counted as exhausted, by whichever
	// of PoolState's criteria held first: the start of the first stretch
	// of at least MinExhaustedSeconds with the service pool at its max, or
	// with PgBouncer clients queued; the first sample at which a PgBouncer
	// client had waited MinExhaustedSeconds; or, judged from the
	// database's view alone, when the first pinned stretch began.
	// ExhaustedBy says which, in words.
	Exhausted   time.Time
	ExhaustedBy string
	// Pinned is when the first stretch counted as pinned began (as
	// rundir.ServiceConns.PinnedFrom: the last statement any of the service's
	// backends started or ended). Of a run with more than 256 pinned
	// stretches of one service only the longest are kept, so it may be a
	// later one's.
	Pinned time.Time

	longWait time.Time
	// stuck holds each sample at which the sessions stuck idle in
	// transaction at once reached a new maximum, in time order.
	stuck []stuckMark
}

type stuckMark struct {
	n  int
	at time.Time
}

func (o *Onsets) addStuck(s *rundir.Sample) {
	if n := s.StuckIdleInTx; n > 0 && (len(o.stuck) == 0 || n > o.stuck[len(o.stuck)-1].n) {
		o.stuck = append(o.stuck, stuckMark{n, s.Time})
	}
}

// StuckAbove is the first sample at which more than n sessions were stuck
// idle in transaction at once; zero if none was.
func (o *Onsets) StuckAbove(n int) time.Time {
	for _, m := range o.stuck {
		if m.n > n {
			return m.at
		}
	}
	return time.Time{}
}

// done sets Exhausted and Pinned from the verdict p and the starts of the
// stretches behind it.
func (o *Onsets) done(p *rundir.PoolState, saturated, waiting, pinned time.Time) {
	if p.Pinned {
		o.Pinned = pinned
	}
	if !p.Exhausted {
		return
	}
	for _, c := range []struct {
		held bool
		at   time.Time
		by   string
	}{
		{p.AppPoolSaturatedSeconds >= MinExhaustedSeconds, saturated, "the service pool at its max"},
		{p.PgBouncerWaitingSeconds >= MinExhaustedSeconds, waiting, "PgBouncer clients queued"},
		{p.WorstWaitSeconds >= MinExhaustedSeconds, o.longWait, fmt.Sprintf("a PgBouncer client had waited %s", format.Seconds(MinExhaustedSeconds))},
		{p.JudgedFrom == "database view", pinned, "the service's connections pinned (database view)"},
	} {
		if c.held && !c.at.IsZero() && (o.Exhausted.IsZero() || c.at.Before(o.Exhausted)) {
			o.Exhausted, o.ExhaustedBy = c.at, c.by
		}
	}
}

// ReadOnsets reads when the pool verdicts of the run in dir, whose summary
// is s, first held, from its samples.jsonl: nil without one (the run was
// not probed).
func ReadOnsets(dir string, s *rundir.Summary) (*Onsets, error) {
	acc, _, err := ReadPool(dir, s)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, rundir.SamplesFile), err)
	}
	return &acc.on, nil
}

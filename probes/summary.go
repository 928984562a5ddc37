package probes

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Summary is what a Poller saw over its whole run.
type Summary struct {
	Samples int `json:"samples"`
	// FailedSamples counts samples with an Error (PostgreSQL or PgBouncer).
	FailedSamples          int     `json:"failed_samples"`
	IdleInTxTimeoutSeconds float64 `json:"idle_in_tx_timeout_seconds"`
	// MaxStuckIdleInTx and MaxIdleInTx are maxima at one instant; MaxIdleInTx
	// counts both idle-in-transaction states.
	MaxStuckIdleInTx int `json:"max_stuck_idle_in_tx"`
	MaxIdleInTx      int `json:"max_idle_in_tx"`
	Episodes         int `json:"episodes"`
	// StuckEpisodes: HoldSeconds >= StuckAfter.
	StuckEpisodes int `json:"stuck_episodes"`
	// TimeoutTerminated: episodes with EndReason "timeout".
	TimeoutTerminated  int     `json:"timeout_terminated"`
	LongestHoldSeconds float64 `json:"longest_hold_seconds"`
	// Release latency over all episodes, nearest-rank percentiles.
	ReleaseP50Seconds       float64 `json:"release_p50_seconds"`
	ReleaseP99Seconds       float64 `json:"release_p99_seconds"`
	ReleaseMaxSeconds       float64 `json:"release_max_seconds"`
	PgBouncerSampled        bool    `json:"pgbouncer_sampled"`
	PgBouncerMaxClWaiting   int     `json:"pgbouncer_max_cl_waiting"`
	PgBouncerMaxWaitSeconds float64 `json:"pgbouncer_max_wait_seconds"`
	// PoolExhausted: some sample had cl_waiting > 0.
	PoolExhausted bool `json:"pool_exhausted"`
	// Culprits group the stuck episodes by the fingerprint of their last
	// query and their application name, most episodes first, then most
	// total hold time.
	Culprits          []Culprit `json:"culprits"`
	StuckAfterSeconds float64   `json:"stuck_after_seconds"`
	IntervalSeconds   float64   `json:"interval_seconds"`
}

// Culprit is one kind of statement that sessions were stuck after.
type Culprit struct {
	Fingerprint      string  `json:"fingerprint"`
	ExampleQuery     string  `json:"example_query"`
	ApplicationName  string  `json:"application_name"`
	Episodes         int     `json:"episodes"`
	TotalHoldSeconds float64 `json:"total_hold_seconds"`
	MaxHoldSeconds   float64 `json:"max_hold_seconds"`
}

// summarizer folds samples and episodes into a Summary as they come.
//
// Release percentiles come from the sorted hold times rather than an HDR
// histogram: a run has thousands of episodes at most (one per sighting of a
// backend idle in transaction), so keeping them costs kilobytes, and sorting
// gives exact percentiles with nothing to configure.
type summarizer struct {
	sum        Summary
	stuckAfter time.Duration
	holds      []float64
	culprits   map[culpritKey]*Culprit
}

type culpritKey struct{ fingerprint, app string }

func newSummarizer(interval, stuckAfter, timeout time.Duration) *summarizer {
	return &summarizer{
		sum: Summary{
			IdleInTxTimeoutSeconds: timeout.Seconds(),
			StuckAfterSeconds:      stuckAfter.Seconds(),
			IntervalSeconds:        interval.Seconds(),
			Culprits:               []Culprit{},
		},
		stuckAfter: stuckAfter,
		culprits:   make(map[culpritKey]*Culprit),
	}
}

func (a *summarizer) addSample(s Sample) {
	a.sum.Samples++
	if s.Error != "" {
		a.sum.FailedSamples++
	}
	a.sum.MaxStuckIdleInTx = max(a.sum.MaxStuckIdleInTx, s.StuckIdleInTx)
	a.sum.MaxIdleInTx = max(a.sum.MaxIdleInTx, s.States.IdleInTx+s.States.IdleInTxAborted)
	if p := s.PgBouncer; p != nil {
		a.sum.PgBouncerSampled = true
		a.sum.PgBouncerMaxClWaiting = max(a.sum.PgBouncerMaxClWaiting, p.ClWaiting)
		a.sum.PgBouncerMaxWaitSeconds = max(a.sum.PgBouncerMaxWaitSeconds, p.MaxWaitSeconds)
		a.sum.PoolExhausted = a.sum.PoolExhausted || p.ClWaiting > 0
	}
}

func (a *summarizer) addEpisode(e Episode) {
	a.sum.Episodes++
	a.holds = append(a.holds, e.HoldSeconds)
	a.sum.LongestHoldSeconds = max(a.sum.LongestHoldSeconds, e.HoldSeconds)
	if e.EndReason == EndTimeout {
		a.sum.TimeoutTerminated++
	}
	if e.HoldSeconds < a.stuckAfter.Seconds() {
		return
	}
	a.sum.StuckEpisodes++
	k := culpritKey{Fingerprint(e.Query), e.ApplicationName}
	c := a.culprits[k]
	if c == nil {
		c = &Culprit{Fingerprint: k.fingerprint, ExampleQuery: e.Query, ApplicationName: k.app}
		a.culprits[k] = c
	}
	c.Episodes++
	c.TotalHoldSeconds += e.HoldSeconds
	c.MaxHoldSeconds = max(c.MaxHoldSeconds, e.HoldSeconds)
}

// summary returns the summary so far.
func (a *summarizer) summary() Summary {
	s := a.sum
	holds := slices.Clone(a.holds)
	slices.Sort(holds)
	s.ReleaseP50Seconds = percentile(holds, 50)
	s.ReleaseP99Seconds = percentile(holds, 99)
	if n := len(holds); n > 0 {
		s.ReleaseMaxSeconds = holds[n-1]
	}
	s.Culprits = make([]Culprit, 0, len(a.culprits))
	for _, c := range a.culprits {
		s.Culprits = append(s.Culprits, *c)
	}
	slices.SortFunc(s.Culprits, func(x, y Culprit) int {
		return cmp.Or(
			cmp.Compare(y.Episodes, x.Episodes),
			cmp.Compare(y.TotalHoldSeconds, x.TotalHoldSeconds),
			cmp.Compare(x.Fingerprint, y.Fingerprint),
			cmp.Compare(x.ApplicationName, y.ApplicationName))
	})
	return s
}

// percentile is the nearest-rank p-th percentile of sorted values; 0 when
// there are none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

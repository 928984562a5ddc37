package probes

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/leakbench/leakbench/probes/querytext"
)

// summarizer folds samples and episodes into a Summary as they come, in
// memory that does not grow with the run: a day of samples at 100 ms with
// a thousand connections costs what an hour does (BenchmarkProbeDay).
type summarizer struct {
	sum            rundir.ProbeSummary
	interval       time.Duration
	stuckAfter     time.Duration
	scrapeInterval time.Duration
	holds          holdStats
	culprits       map[culpritKey]*culpritEntry
	culpritSeq     int
	keepQuery      bool // Config.KeepQueryText
	little         littleAcc

	lastBouncer  time.Time
	exhausted    bool
	lastApp      time.Time
	prevApp      *rundir.AppPoolSample
	appIncreases [5]float64 // waits, wait seconds, canceled, uses, use seconds: increases, resets handled
	appUseHist   poolmetrics.HistogramRun
	appWaitHist  poolmetrics.HistogramRun
}

type culpritKey struct{ fingerprint, app string }

type culpritEntry struct {
	rundir.Culprit
	seq int // order of arrival: of two with as few episodes, the older goes
}

// maxCulprits bounds the culprits kept: a service has a few dozen kinds of
// statement; thousands of fingerprints mean texts that differ in their
// identifiers (temporary tables, generated names), where the ones seen
// most are what matters.
const maxCulprits = 500

// holdStats keeps the release latencies: every one, for exact
// percentiles, up to maxExactHolds, and all of them in an HDR histogram
// (microseconds, three significant digits, about 300 kB) that answers
// beyond that.
type holdStats struct {
	exact []float64
	hist  *hdrhistogram.Histogram
}

const (
	maxExactHolds = 1 << 16
	// maxHoldMicros is the longest hold the histogram tells apart (30
	// days); longer ones count as that.
	maxHoldMicros = 30 * 24 * 3600 * 1_000_000
)

func (h *holdStats) add(seconds float64) {
	if len(h.exact) < maxExactHolds {
		h.exact = append(h.exact, seconds)
	}
	if h.hist == nil {
		h.hist = hdrhistogram.New(1, maxHoldMicros, 3)
	}
	_ = h.hist.RecordValue(min(max(int64(math.Round(seconds*1e6)), 1), maxHoldMicros))
}

// percentiles returns the nearest-rank percentiles ps of the holds, none
// above maxSeconds (the exact maximum).
func (h *holdStats) percentiles(maxSeconds float64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	if h.hist == nil {
		return out
	}
	if int64(len(h.exact)) == h.hist.TotalCount() {
		sorted := slices.Clone(h.exact)
		slices.Sort(sorted)
		for i, p := range ps {
			out[i] = percentile(sorted, p)
		}
		return out
	}
	for i, p := range ps {
		out[i] = min(float64(h.hist.ValueAtQuantile(p))/1e6, maxSeconds)
	}
	return out
}

func newSummarizer(interval, stuckAfter, timeout time.Duration) *summarizer {
	return &summarizer{
		sum: rundir.ProbeSummary{
			IdleInTxTimeoutSeconds: timeout.Seconds(),
			StuckAfterSeconds:      stuckAfter.Seconds(),
			IntervalSeconds:        interval.Seconds(),
			Culprits:               []rundir.Culprit{},
			Warnings:               []rundir.Warning{},
			EndReasons:             map[string]int{},
		},
		interval:       interval,
		stuckAfter:     stuckAfter,
		scrapeInterval: DefaultScrapeInterval,
		culprits:       make(map[culpritKey]*culpritEntry),
	}
}

// Summarize folds recorded samples and episodes (samples.jsonl and
// episodes.jsonl) into the Summary a Poller configured with cfg would have
// returned, Warnings aside (the files do not keep them): for a run whose
// probe was killed before it wrote its own. timeout is the server's
// idle_in_transaction_session_timeout, 0 when off. Culprits' example
// queries are masked unless cfg.KeepQueryText is set, also when the files
// hold raw texts.
func Summarize(cfg Config, timeout time.Duration, samples []rundir.Sample, episodes []rundir.Episode) rundir.ProbeSummary {
	a := NewSummarizer(cfg, timeout)
	for _, s := range samples {
		a.AddSample(s)
	}
	for _, e := range episodes {
		a.AddEpisode(e)
	}
	return a.Summary()
}

// Summarizer is Summarize one record at a time, for files read as a
// stream: its memory does not grow with the records.
type Summarizer struct{ a *summarizer }

// NewSummarizer returns an empty Summarizer for a Poller configured with
// cfg, the server's idle_in_transaction_session_timeout being timeout.
func NewSummarizer(cfg Config, timeout time.Duration) *Summarizer {
	cfg = cfg.withDefaults()
	a := newSummarizer(cfg.Interval, cfg.StuckAfter, timeout)
	a.scrapeInterval = cfg.ScrapeInterval
	a.keepQuery = cfg.KeepQueryText
	return &Summarizer{a}
}

// AddSample folds one line of samples.jsonl in; samples go in the order
// they were taken.
func (s *Summarizer) AddSample(x rundir.Sample) { s.a.addSample(x) }

// AddEpisode folds one line of episodes.jsonl in.
func (s *Summarizer) AddEpisode(e rundir.Episode) { s.a.addEpisode(e) }

// Summary returns the summary of what was added so far.
func (s *Summarizer) Summary() rundir.ProbeSummary { return s.a.summary() }

func (a *summarizer) addSample(s rundir.Sample) {
	a.sum.Samples++
	if s.Error != "" {
		a.sum.FailedSamples++
	}
	if s.Gap {
		a.sum.GapSamples++
	}
	if s.TookSeconds > a.interval.Seconds() {
		a.sum.SlowSamples++
	}
	a.sum.SkippedTicks += s.SkippedTicks
	a.sum.MaxSampleSeconds = max(a.sum.MaxSampleSeconds, s.TookSeconds)
	a.sum.MaxStuckIdleInTx = max(a.sum.MaxStuckIdleInTx, s.StuckIdleInTx)
	a.sum.MaxIdleInTx = max(a.sum.MaxIdleInTx, s.States.IdleInTx+s.States.IdleInTxAborted)
	a.little.add(&s)
	if d := s.Database; d != nil {
		a.sum.DatabaseSampled = true
		if d.Reset {
			a.sum.DatabaseResets++
		}
		a.sum.ProbeXactsTotal += d.ProbeXacts
		a.sum.XactCommitTotal += d.XactCommit
		a.sum.XactRollbackTotal += d.XactRollback
		a.sum.IdleInTxSecondsTotal += d.IdleInTxSeconds
		a.sum.SessionsFatalTotal += d.SessionsFatal
		a.sum.SessionsKilledTotal += d.SessionsKilled
		a.sum.SessionsAbandonedTotal += d.SessionsAbandoned
	}
	if p := s.PgBouncer; p != nil {
		a.addPools(s.Time, p)
	}
	if p := s.AppPool; p != nil {
		a.addAppPool(s.Time, p)
	}
}

func (a *summarizer) addPools(t time.Time, p *rundir.PoolSample) {
	a.sum.PgBouncerSampled = true
	a.sum.PgBouncerMaxClWaiting = max(a.sum.PgBouncerMaxClWaiting, p.ClWaiting)
	a.sum.PgBouncerMaxWaitSeconds = max(a.sum.PgBouncerMaxWaitSeconds, p.MaxWaitSeconds)
	a.sum.PgBouncerXactsTotal += p.Xacts
	a.sum.PgBouncerWaitSecondsTotal += p.WaitSeconds
	waiting := p.Exhausted
	if waiting {
		a.sum.PoolExhausted = true
		if !a.exhausted {
			a.sum.PoolExhaustedSpans++
		}
		if !a.lastBouncer.IsZero() {
			a.sum.PoolExhaustedSeconds += min(max(t.Sub(a.lastBouncer).Seconds(), 0), 1)
		}
	}
	a.exhausted = waiting
	a.lastBouncer = t
}

func (a *summarizer) addAppPool(t time.Time, p *rundir.AppPoolSample) {
	a.sum.AppPoolSampled = true
	a.sum.AppPoolMaxAcquired = max(a.sum.AppPoolMaxAcquired, p.Acquired)
	a.sum.AppPoolMax = max(a.sum.AppPoolMax, p.Max)
	a.sum.AppPoolMaxUnclosedSessions = max(a.sum.AppPoolMaxUnclosedSessions, p.UnclosedSessions)
	a.sum.AppPoolMaxWaiting = max(a.sum.AppPoolMaxWaiting, p.Waiting)
	if p.Max > 0 && p.Acquired >= p.Max && !a.lastApp.IsZero() {
		a.sum.AppPoolSaturatedSeconds += min(max(t.Sub(a.lastApp).Seconds(), 0), 2*a.scrapeInterval.Seconds())
	}
	if prev := a.prevApp; prev != nil {
		for i, pair := range [][2]float64{
			{prev.AcquireWaitsTotal, p.AcquireWaitsTotal},
			{prev.AcquireWaitSecondsTotal, p.AcquireWaitSecondsTotal},
			{prev.CanceledAcquiresTotal, p.CanceledAcquiresTotal},
			{prev.UsesTotal, p.UsesTotal},
			{prev.UseSecondsTotal, p.UseSecondsTotal},
		} {
			if d := pair[1] - pair[0]; d >= 0 {
				a.appIncreases[i] += d
			} else { // the service restarted: its counters began again
				a.appIncreases[i] += pair[1]
			}
		}
	}
	a.sum.AppPoolAcquireWaits, a.sum.AppPoolAcquireWaitSeconds, a.sum.AppPoolCanceledAcquires =
		a.appIncreases[0], a.appIncreases[1], a.appIncreases[2]
	a.sum.AppPoolUses, a.sum.AppPoolUseSeconds = a.appIncreases[3], a.appIncreases[4]
	if a.sum.AppPoolUses > 0 {
		a.sum.AppPoolUseMeanSeconds = a.sum.AppPoolUseSeconds / a.sum.AppPoolUses
	}
	a.appUseHist.Add(p.UseHistogram)
	a.appWaitHist.Add(p.WaitHistogram)
	a.sum.AppPoolUseQuantiles = poolmetrics.Quantiles(a.appUseHist.Increase(), "the service pool's use_time histogram", "checkouts")
	a.sum.AppPoolWaitQuantiles = poolmetrics.Quantiles(a.appWaitHist.Increase(), "the service pool's wait_time histogram", "acquires")
	c := *p
	c.UseHistogram, c.WaitHistogram = nil, nil // kept by the HistogramRuns
	a.prevApp = &c
	a.lastApp = t
}

func (a *summarizer) addEpisode(e rundir.Episode) {
	a.sum.Episodes++
	a.sum.EndReasons[e.EndReason]++
	a.holds.add(e.HoldSeconds)
	a.sum.LongestHoldSeconds = max(a.sum.LongestHoldSeconds, e.HoldSeconds)
	if e.EndReason == rundir.EndTimeout {
		a.sum.TimeoutTerminated++
	}
	if e.HoldSeconds < a.stuckAfter.Seconds() {
		return
	}
	a.sum.StuckEpisodes++
	if e.PgBouncer != nil {
		a.sum.StuckEpisodesLinked++
	}
	fp := e.Fingerprint
	if fp == "" { // recorded before episodes carried it
		fp = querytext.Fingerprint(e.Query)
	}
	k := culpritKey{fp, e.ApplicationName}
	c := a.culprits[k]
	if c == nil {
		if len(a.culprits) >= maxCulprits {
			a.dropCulprit()
		}
		example := querytext.Sanitize(e.Query)
		if !a.keepQuery {
			example = querytext.Mask(e.Query)
		}
		a.culpritSeq++
		c = &culpritEntry{rundir.Culprit{Fingerprint: k.fingerprint, ExampleQuery: example, ApplicationName: k.app, ClientAddr: e.ClientAddr}, a.culpritSeq}
		a.culprits[k] = c
	}
	if c.AppClientAddr == "" && e.PgBouncer != nil {
		c.AppClientAddr = e.PgBouncer.ClientAddr
	}
	c.Episodes++
	c.TotalHoldSeconds += e.HoldSeconds
	c.MaxHoldSeconds = max(c.MaxHoldSeconds, e.HoldSeconds)
}

// dropCulprit makes room for a new culprit: the one with the fewest
// episodes goes, the oldest of those.
func (a *summarizer) dropCulprit() {
	var worst culpritKey
	var w *culpritEntry
	for k, c := range a.culprits {
		if w == nil || c.Episodes < w.Episodes || c.Episodes == w.Episodes && c.seq < w.seq {
			worst, w = k, c
		}
	}
	delete(a.culprits, worst)
}

// summary returns the summary so far.
func (a *summarizer) summary() rundir.ProbeSummary {
	s := a.sum
	s.EndReasons = make(map[string]int, len(a.sum.EndReasons))
	for k, v := range a.sum.EndReasons {
		s.EndReasons[k] = v
	}
	if s.DatabaseSampled {
		s.TimeoutUnconfirmed = max(0, s.TimeoutTerminated-int(s.SessionsFatalTotal))
	}
	s.Hold = a.little.hold()
	ps := a.holds.percentiles(s.LongestHoldSeconds, 50, 99)
	s.ReleaseP50Seconds, s.ReleaseP99Seconds = ps[0], ps[1]
	s.ReleaseMaxSeconds = s.LongestHoldSeconds
	s.Culprits = a.culpritsSoFar()
	return s
}

// culpritsSoFar is every culprit, the most episodes first.
func (a *summarizer) culpritsSoFar() []rundir.Culprit {
	cs := make([]rundir.Culprit, 0, len(a.culprits))
	for _, c := range a.culprits {
		cs = append(cs, c.Culprit)
	}
	slices.SortFunc(cs, func(x, y rundir.Culprit) int {
		return cmp.Or(
			cmp.Compare(y.Episodes, x.Episodes),
			cmp.Compare(y.TotalHoldSeconds, x.TotalHoldSeconds),
			cmp.Compare(y.MaxHoldSeconds, x.MaxHoldSeconds),
			cmp.Compare(x.Fingerprint, y.Fingerprint),
			cmp.Compare(x.ApplicationName, y.ApplicationName))
	})
	return cs
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

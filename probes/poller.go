package probes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/leakbench/leakbench/probes/serverlog"
)

// sampleTimeout bounds a tick's read of one source, past the server's own
// statement_timeout so that it normally fires first.
const sampleTimeout = statementTimeout + time.Second

// setupTimeout bounds Start's connecting and first reads.
const setupTimeout = 2*connectTimeout + 2*sampleTimeout

// Poller samples PostgreSQL (and PgBouncer) on a ticker in its own
// goroutine, tracks idle-in-transaction episodes, scrapes the service's
// own pool metrics in another, and writes samples and episodes to the run
// directory as they come.
type Poller struct {
	cfg     Config
	timeout time.Duration
	pg      *pgSampler
	bouncer *poolSampler // nil without PgBouncer
	// bouncerPoolSize is the watched database's PgBouncer pool_size, read
	// at start; 0 when not read.
	bouncerPoolSize int
	scraper         *poolmetrics.Scraper // nil without scrape targets
	track           *tracker
	sum             *summarizer
	rec             *recorder      // nil without RunDir
	slog            *serverlog.Log // nil without ServerLogFile, or when it cannot be read
	metrics         *probeMetrics
	server          *metricsServer // nil without MetricsAddr
	warn            *warnings

	tracked   []int32   // pids of open episodes, for the next read
	stuckAt   time.Time // when Status.Stuck's open ones were last listed
	prevStart time.Time // when the previous sample began
	// blockersReadAt is when the lock cascade was last read (locks.go).
	blockersReadAt time.Time

	cancel  context.CancelFunc
	running sync.WaitGroup // the sampling goroutine and the scraping one

	mu                      sync.Mutex
	last                    rundir.Sample
	episodes, stuckEpisodes int
	// culprits are the top culprits so far, for Status, copied from the
	// summary at most once a second (culpritsAt) by the sampling
	// goroutine, which alone owns the summary.
	culprits   []rundir.Culprit
	culpritsAt time.Time
	// stuckOpen and stuckEnded are Status.Stuck's halves (livestuck.go):
	// the first refreshed with the culprits, by the sampling goroutine
	// (the tracker is its), the second as episodes end.
	stuckOpen, stuckEnded []StuckTrace

	stopOnce sync.Once
	summary  *rundir.ProbeSummary
	stopErr  error
}

// Start connects to PostgreSQL, checks that the role can see other
// sessions, reads idle_in_transaction_session_timeout, opens the run
// directory's files and starts sampling. ctx bounds this setup only:
// sampling goes on until Stop.
//
// PostgreSQL is the one source Start insists on: it returns an error when
// it cannot read it. PgBouncer and the scrape targets are tried at once,
// but a failure there is a Warning (Config.OnWarning, Summary.Warnings and
// the samples' Error) and they are retried on every tick, so that a
// mistake in one never stops the others. Errors name what failed and what
// to do, and never include a password; bad configuration wraps ErrConfig.
func Start(ctx context.Context, cfg Config) (p *Poller, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("start probe: %w", err)
	}
	p = &Poller{cfg: cfg, metrics: newProbeMetrics(), warn: newWarnings(cfg.OnWarning)}
	setupCtx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			p.closeSources()
			if p.rec != nil {
				_ = p.rec.close()
			}
			if p.server != nil {
				_ = p.server.close()
			}
			p, err = nil, fmt.Errorf("start probe: %w", err)
		}
	}()
	if p.pg, err = newPGSampler(cfg.DSN, cfg.Interval); err != nil {
		return p, err
	}
	if p.timeout, err = p.pg.setup(setupCtx, cfg.Database); err != nil {
		return p, err
	}
	p.cfg.Database = p.pg.db
	if cfg.PgBouncerAdminDSN != "" {
		if p.bouncer, err = newPoolSampler(cfg.PgBouncerAdminDSN, p.cfg.Database, cfg.Interval); err != nil {
			return p, err
		}
		_, _, err := p.bouncer.read(setupCtx, nil) // warn at once about a wrong DSN
		p.warn.report("pgbouncer", err, time.Now())
		if err == nil {
			// Sizing checks the pools against it; a failure here is no
			// warning of its own: the samples' reads say what fails.
			p.bouncerPoolSize, _ = p.bouncer.poolSize(setupCtx)
		}
	}
	if cfg.ServerLogFile != "" {
		p.slog = p.openServerLog(setupCtx)
	}
	if len(cfg.Scrape) > 0 {
		if p.scraper, err = poolmetrics.NewScraper(cfg.Scrape, cfg.Mappings, p.warn.report); err != nil {
			return p, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if cfg.RunDir != "" {
		if p.rec, err = openRecorder(cfg.RunDir); err != nil {
			return p, err
		}
	}
	if cfg.MetricsAddr != "" {
		if p.server, err = serveMetrics(cfg.MetricsAddr, p.metrics.reg); err != nil {
			return p, err
		}
	}
	p.track = newTracker(p.timeout, cfg.KeepQueryText)
	p.track.sent = newSentTokens(cfg.SentTokens)
	if p.slog != nil {
		p.track.kills = p.slog
	}
	p.sum = newSummarizer(cfg.Interval, cfg.StuckAfter, p.timeout)
	p.sum.scrapeInterval = cfg.ScrapeInterval
	limits := p.pg.limits
	p.sum.sum.Server = &limits
	p.sum.sum.PgBouncerPoolSize = p.bouncerPoolSize
	p.sum.keepQuery = cfg.KeepQueryText
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = stop
	if p.scraper != nil {
		p.running.Go(func() { every(runCtx, cfg.ScrapeInterval, p.scraper.Round) })
	}
	p.running.Go(func() { every(runCtx, cfg.Interval, p.sampleOnce) })
	return p, nil
}

// Config returns the configuration in force: defaults applied and Database
// resolved.
func (p *Poller) Config() Config { return p.cfg }

// IdleInTxTimeout is the server's idle_in_transaction_session_timeout as
// the probe read it at Start; 0 when off.
func (p *Poller) IdleInTxTimeout() time.Duration { return p.timeout }

// MetricsURL is where the probe's own metrics are served; empty without
// Config.MetricsAddr.
func (p *Poller) MetricsURL() string {
	if p.server == nil {
		return ""
	}
	return p.server.url()
}

// Snapshot returns the latest sample (the zero Sample before the first).
func (p *Poller) Snapshot() rundir.Sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Status is what a live view shows: the latest sample, the latest scrape
// of the service's own pool (most samples have none), the episodes so far
// and the sources failing now.
type Status struct {
	Sample        rundir.Sample
	AppPool       *rundir.AppPoolSample
	AppPoolTime   time.Time
	Episodes      int
	StuckEpisodes int
	// Culprits are the culprits so far, the most episodes first, at most
	// liveCulprits, as of the last second.
	Culprits []rundir.Culprit
	Warnings []rundir.Warning
	// Stuck are the stuck episodes whose queries carried a trace id
	// (livestuck.go): the open ones as of the last second (the oldest
	// liveStuck), then the latest liveStuck that ended, the latest last.
	Stuck []StuckTrace
}

// liveCulprits bounds Status.Culprits: what a live view lists.
const liveCulprits = 10

// Status returns the Poller's current Status.
func (p *Poller) Status() Status {
	p.mu.Lock()
	st := Status{Sample: p.last, Episodes: p.episodes, StuckEpisodes: p.stuckEpisodes, Culprits: p.culprits}
	if n := len(p.stuckOpen) + len(p.stuckEnded); n > 0 {
		st.Stuck = make([]StuckTrace, 0, n)
		st.Stuck = append(append(st.Stuck, p.stuckOpen...), p.stuckEnded...)
	}
	p.mu.Unlock()
	if p.scraper != nil {
		st.AppPool, st.AppPoolTime = p.scraper.Last()
	}
	st.Warnings = p.warn.current()
	return st
}

// Stop stops sampling, takes a last sample, ends the episodes still open
// (EndReason "open_at_end"), closes the connections, files and metrics server, and
// returns the summary with any error writing the files. Calling it again
// returns the same.
func (p *Poller) Stop() (*rundir.ProbeSummary, error) {
	p.stopOnce.Do(func() {
		p.cancel()
		p.running.Wait()
		if p.scraper != nil {
			p.scraper.Close()
		}
		// One last sample, with pg_stat_database, so that the summary
		// counts what happened since the last read of it.
		p.pg.dbReadAt = time.Time{}
		p.sampleOnce(context.Background())
		if p.slog != nil {
			p.warn.report(sourceServerLog, p.slog.Poll(), time.Now())
		}
		for _, e := range p.track.close() {
			p.episode(e)
		}
		p.closeSources()
		var errs []error
		if p.rec != nil {
			errs = append(errs, p.rec.close())
		}
		if p.server != nil {
			errs = append(errs, p.server.close())
		}
		p.stopErr = errors.Join(errs...)
		s := p.sum.summary()
		s.Warnings = p.warn.all()
		s.MalformedComments = p.track.malformedComments
		p.summary = &s
	})
	return p.summary, p.stopErr
}

// every calls f at once and then on every tick until ctx ends. A
// time.Ticker drops the ticks a slow call misses, so calls never queue up.
func every(ctx context.Context, interval time.Duration, f func(context.Context)) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sampleOnce takes one sample from every source. A failed read makes the
// sample carry an Error (a gap when PostgreSQL failed), never a stop. A
// sample cut short by Stop is dropped. Each source has sampleTimeout of
// its own: a stalled PostgreSQL does not fail the PgBouncer read after it.
func (p *Poller) sampleOnce(ctx context.Context) {
	began := time.Now()
	var s rundir.Sample
	if !p.prevStart.IsZero() {
		s.SkippedTicks = max(int(math.Round(float64(began.Sub(p.prevStart))/float64(p.cfg.Interval)))-1, 0)
	}
	p.prevStart = began
	var errs []string
	readCtx, cancel := context.WithTimeout(ctx, sampleTimeout)
	a, err := p.pg.read(readCtx, p.tracked)
	cancel()
	if ctx.Err() != nil {
		return
	}
	p.warn.report("postgres", err, began)
	if err != nil {
		s.Time, s.Gap = began.UTC(), true
		errs = append(errs, err.Error())
	} else {
		if p.slog != nil { // after the read: the kills it shows are logged
			p.warn.report(sourceServerLog, p.slog.Poll(), began)
		}
		p.absorb(&s, a)
		p.readBlockers(ctx, a.now) // the lock cascade, while something is stuck
	}
	if p.bouncer != nil {
		var want []int32
		if err == nil {
			// Half the stuck threshold: the link is there by the time an
			// episode counts as stuck, even if it ends soon after.
			want = p.track.unlinked(a.now, p.cfg.StuckAfter/2)
		}
		readCtx, cancel := context.WithTimeout(ctx, sampleTimeout)
		pools, links, berr := p.bouncer.read(readCtx, want)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p.warn.report("pgbouncer", berr, began)
		if berr != nil {
			errs = append(errs, berr.Error())
		} else {
			s.PgBouncer = &pools
			p.track.link(want, links)
		}
	}
	if p.scraper != nil {
		s.AppPool = p.scraper.Take()
	}
	if len(errs) > 0 {
		s.Error = redact.String(strings.Join(errs, "; "))
	}
	s.TookSeconds = time.Since(began).Seconds()
	p.keep(&s)
}

// absorb fills s from a successful read of PostgreSQL and ends the
// episodes it shows over.
func (p *Poller) absorb(s *rundir.Sample, a activity) {
	measure(s, a, p.cfg.StuckAfter)
	for _, e := range p.track.observe(a.now, a.rows) {
		p.episode(e)
	}
	s.OldestIdleInTx = p.track.oldest(a.now)
	p.tracked = p.track.tracked(p.tracked)
	if a.now.Sub(p.stuckAt) >= time.Second {
		// Once a second, as the culprits: a live view's tick.
		stuck := p.track.stuckOpen(a.now, p.cfg.StuckAfter)
		p.stuckAt = a.now
		p.mu.Lock()
		p.stuckOpen = stuck
		p.mu.Unlock()
	}
}

// keep adds a finished sample to the summary, the metrics and the file.
func (p *Poller) keep(s *rundir.Sample) {
	busy, xacts := p.sum.little.busySecs, p.sum.little.out.Xacts
	p.sum.addSample(*s)
	var culprits []rundir.Culprit
	fresh := s.Time.Sub(p.culpritsAt) >= time.Second
	if fresh {
		// A copy, since Status hands it out; a second old at most, so
		// that sorting them costs nothing at 100 ms samples.
		culprits = p.sum.culpritsSoFar()
		culprits = culprits[:min(len(culprits), liveCulprits)]
		p.culpritsAt = s.Time
	}
	p.metrics.sample(s)
	p.metrics.little(&p.sum.little, busy, xacts)
	if p.rec != nil {
		p.rec.sample(s)
	}
	p.mu.Lock()
	p.last = *s
	if fresh {
		p.culprits = culprits
	}
	p.mu.Unlock()
}

func (p *Poller) episode(e rundir.Episode) {
	p.sum.addEpisode(e)
	p.metrics.episode(e)
	if p.rec != nil {
		p.rec.episode(&e)
	}
	p.mu.Lock()
	p.episodes++
	if e.HoldSeconds >= p.cfg.StuckAfter.Seconds() {
		p.stuckEpisodes++
	}
	if st, ok := stuckEnded(&e, p.cfg.StuckAfter); ok {
		if len(p.stuckEnded) == liveStuck {
			p.stuckEnded = append(p.stuckEnded[:0], p.stuckEnded[1:]...)
		}
		p.stuckEnded = append(p.stuckEnded, st)
	}
	p.mu.Unlock()
}

// sourceServerLog names the server log in Warnings.
const sourceServerLog = "server log"

// openServerLog opens Config.ServerLogFile; a failure is a Warning and
// nil: the probe does without.
func (p *Poller) openServerLog(ctx context.Context) *serverlog.Log {
	prefix, tz, err := p.pg.logSettings(ctx)
	if err == nil {
		err = serverlog.CheckPrefix(prefix)
	}
	var l *serverlog.Log
	if err == nil {
		l, err = serverlog.Open(p.cfg.ServerLogFile, tz)
	}
	p.warn.report(sourceServerLog, err, time.Now())
	return l
}

func (p *Poller) closeSources() {
	if p.slog != nil {
		_ = p.slog.Close()
		p.slog = nil
	}
	if p.pg != nil {
		p.pg.close()
	}
	if p.bouncer != nil {
		p.bouncer.close()
	}
}

package probes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// sampler reads one more source into each Sample. The Poller owns the
// ticker and calls every sampler in turn; a sampler only reads. PgBouncer's
// pools are one; a scrape of the service's own pool metrics is meant to be
// the next.
type sampler interface {
	sample(ctx context.Context, s *Sample) error
	close()
}

// sampleTimeout bounds one tick's reads, past the server's own
// statement_timeout so that it normally fires first.
const sampleTimeout = statementTimeout + time.Second

// setupTimeout bounds Start's connecting and first reads.
const setupTimeout = 2*connectTimeout + 2*sampleTimeout

// Poller samples PostgreSQL (and PgBouncer) on a ticker in its own
// goroutine, tracks idle-in-transaction episodes, and writes samples and
// episodes to the run directory as they come.
type Poller struct {
	cfg      Config
	timeout  time.Duration
	pg       *pgSampler
	samplers []sampler
	track    *tracker
	sum      *summarizer
	rec      *recorder // nil without RunDir

	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	last Sample

	stopOnce sync.Once
	summary  *Summary
	stopErr  error
}

// Start connects to PostgreSQL (and PgBouncer's console when configured),
// checks that the role can see other sessions, reads
// idle_in_transaction_session_timeout, opens the run directory's files and
// starts sampling. ctx bounds this setup only: sampling goes on until Stop.
// Errors name what failed and never include a DSN's password; bad
// configuration wraps ErrConfig.
func Start(ctx context.Context, cfg Config) (p *Poller, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p = &Poller{cfg: cfg, done: make(chan struct{})}
	setupCtx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			p.closeSources()
			if p.rec != nil {
				_ = p.rec.close()
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
		pools, err := newPoolSampler(cfg.PgBouncerAdminDSN, p.cfg.Database, cfg.Interval)
		if err != nil {
			return p, err
		}
		p.samplers = append(p.samplers, pools)
		if _, err := pools.read(setupCtx); err != nil { // fail early on a wrong DSN
			return p, err
		}
	}
	if cfg.RunDir != "" {
		if p.rec, err = openRecorder(cfg.RunDir); err != nil {
			return p, err
		}
	}
	p.track = newTracker(p.timeout)
	p.sum = newSummarizer(cfg.Interval, cfg.StuckAfter, p.timeout)
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = stop
	go p.run(runCtx)
	return p, nil
}

// Config returns the configuration in force: defaults applied and Database
// resolved.
func (p *Poller) Config() Config { return p.cfg }

// IdleInTxTimeout is the server's idle_in_transaction_session_timeout as
// the probe read it at Start; 0 when off.
func (p *Poller) IdleInTxTimeout() time.Duration { return p.timeout }

// Snapshot returns the latest sample (the zero Sample before the first).
func (p *Poller) Snapshot() Sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Stop stops sampling, ends the episodes still open (EndReason
// "open_at_end"), closes the connections and files, and returns the
// summary with any error writing the files. Calling it again returns the
// same.
func (p *Poller) Stop() (*Summary, error) {
	p.stopOnce.Do(func() {
		p.cancel()
		<-p.done
		for _, e := range p.track.close() {
			p.episode(e)
		}
		p.closeSources()
		if p.rec != nil {
			p.stopErr = p.rec.close()
		}
		s := p.sum.summary()
		p.summary = &s
	})
	return p.summary, p.stopErr
}

// run samples at once and then on every tick until ctx ends. A time.Ticker
// drops ticks a slow sample misses, so samples never queue up.
func (p *Poller) run(ctx context.Context) {
	defer close(p.done)
	ticker := time.NewTicker(p.cfg.Interval)
	defer ticker.Stop()
	for {
		p.sampleOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// sampleOnce takes one sample from every source. A failed read makes the
// sample a gap with an Error, never a stop. A sample cut short by Stop is
// dropped.
func (p *Poller) sampleOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	var s Sample
	var errs []string
	now, rows, err := p.pg.read(ctx)
	if errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	if err != nil {
		s.Time = time.Now().UTC()
		errs = append(errs, err.Error())
	} else {
		measure(&s, now, rows, p.cfg.StuckAfter)
		for _, e := range p.track.observe(now, rows) {
			p.episode(e)
		}
	}
	for _, x := range p.samplers {
		if err := x.sample(ctx, &s); err != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return
			}
			errs = append(errs, err.Error())
		}
	}
	s.Error = strings.Join(errs, "; ")
	p.sum.addSample(s)
	if p.rec != nil {
		p.rec.sample(s)
		p.rec.tick(time.Now())
	}
	p.mu.Lock()
	p.last = s
	p.mu.Unlock()
}

func (p *Poller) episode(e Episode) {
	p.sum.addEpisode(e)
	if p.rec != nil {
		p.rec.episode(e)
	}
}

func (p *Poller) closeSources() {
	if p.pg != nil {
		p.pg.close()
	}
	for _, x := range p.samplers {
		x.close()
	}
}

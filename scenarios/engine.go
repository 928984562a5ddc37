package scenarios

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
)

const (
	// maxInitAttempts bounds how often a user tries to initialize in a row
	// before giving up (counted in Result.AbortedUsers).
	maxInitAttempts = 5
	// minInitBackoff is the least wait before retrying a failed initialize,
	// so that zero think time does not turn into a busy loop.
	minInitBackoff = 100 * time.Millisecond
	// closeTimeout bounds the DELETE that ends a session at the end of a
	// run, also after the run's context ended: sessions are released
	// whenever the target lets us.
	closeTimeout = 500 * time.Millisecond
	// progressEvery is the interval of progress lines.
	progressEvery = time.Second
)

// Run plays cfg: cfg.Users virtual users, started evenly over cfg.RampUp,
// each initializing an MCP session and then iterating (tools/list every
// cfg.ListToolsEvery-th iteration, else a tools/call picked by weight, or a
// ping if cfg.Tools is empty) with think times in between, until
// cfg.Duration has passed; then each user closes its session.
//
// When Duration ends, users start nothing new but let a request in flight
// finish (within RequestTimeout): cancelling them all at once would look to
// the target like a burst of clients giving up, the very pattern that
// triggers the leaks under test. When ctx ends, requests in flight are
// abandoned at once (kind "canceled"), and Run returns the partial result
// with Interrupted set and an error wrapping ctx's cause. Either way Run
// returns within about RequestTimeout + 1s and leaves no goroutine behind.
//
// Progress lines go to progress every second, if it is not nil. An invalid
// cfg is reported before anything is sent.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid scenario config: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &engine{
		cfg:    cfg,
		m:      newMetrics(cfg.Users, cfg.Tokens),
		client: NewClient(cfg.Target, ClientOptions{RequestTimeout: cfg.RequestTimeout, MaxConns: cfg.Users}),
	}
	defer e.client.CloseIdleConnections()
	e.pickTools()

	started := time.Now()
	stopCtx, stop := context.WithDeadline(ctx, started.Add(cfg.Duration))
	defer stop()

	var users sync.WaitGroup
	for i := range cfg.Users {
		users.Go(func() { e.user(ctx, stopCtx, i) })
	}
	var reporter sync.WaitGroup
	done := make(chan struct{})
	if progress != nil {
		reporter.Go(func() { e.report(progress, started, done) })
	}
	users.Wait()
	close(done)
	reporter.Wait()

	res := e.result(started, time.Now())
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, fmt.Errorf("run interrupted after %s: %w",
			res.Ended.Sub(started).Round(time.Millisecond), context.Cause(ctx))
	}
	return res, nil
}

type engine struct {
	cfg    Config
	m      *metrics
	client *Client

	cumWeights []int    // cumulative tool weights
	toolKeys   []string // "tools/call:<name>"
}

func (e *engine) pickTools() {
	total := 0
	for _, t := range e.cfg.Tools {
		total += max(t.Weight, 1)
		e.cumWeights = append(e.cumWeights, total)
		e.toolKeys = append(e.toolKeys, OpCallTool+":"+t.Name)
	}
}

// user is one virtual user's whole life.
func (e *engine) user(ctx, stopCtx context.Context, i int) {
	if !sleep(stopCtx, e.cfg.RampUp*time.Duration(i)/time.Duration(e.cfg.Users)) {
		return
	}
	e.m.userStarted()
	defer e.m.userStopped()

	token := ""
	if n := len(e.cfg.Tokens); n > 0 {
		token = e.cfg.Tokens[i%n]
	}
	s := e.client.NewSession(token)
	defer closeSession(ctx, s)
	sh := e.m.shard(i)
	rng := rand.New(rand.NewPCG(uint64(e.cfg.Seed), uint64(i)))

	if !e.initialize(ctx, stopCtx, s, sh, rng) {
		return
	}
	for n := 1; ; n++ {
		if !sleep(stopCtx, e.think(rng)) {
			return
		}
		err := e.iterate(ctx, s, sh, rng, n)
		if isCanceled(err) {
			return
		}
		e.m.iterations.Add(1)
		if errors.Is(err, ErrSessionExpired) {
			e.m.reinits.Add(1)
			if !e.initialize(ctx, stopCtx, s, sh, rng) {
				return
			}
		}
	}
}

// initialize runs the handshake, retrying a bounded number of times. It
// reports whether the user has a session.
func (e *engine) initialize(ctx, stopCtx context.Context, s *Session, sh *shard, rng *rand.Rand) bool {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := s.Initialize(ctx)
		e.m.record(sh, OpInitialize, "", time.Since(start), err)
		switch {
		case err == nil:
			return true
		case isCanceled(err):
			return false
		case attempt >= maxInitAttempts:
			e.m.aborted.Add(1)
			return false
		}
		if !sleep(stopCtx, max(e.think(rng), minInitBackoff)) {
			return false
		}
		e.m.initRetries.Add(1)
	}
}

// iterate sends the n-th iteration's request (n from 1) and records it.
func (e *engine) iterate(ctx context.Context, s *Session, sh *shard, rng *rand.Rand, n int) error {
	start := time.Now()
	var err error
	switch {
	case e.cfg.ListToolsEvery > 0 && n%e.cfg.ListToolsEvery == 0:
		_, err = s.ListTools(ctx)
		e.m.record(sh, OpListTools, "", time.Since(start), err)
	case len(e.cfg.Tools) > 0:
		k := sort.SearchInts(e.cumWeights, rng.IntN(e.cumWeights[len(e.cumWeights)-1])+1)
		t := &e.cfg.Tools[k]
		_, err = s.CallTool(ctx, t.Name, t.Arguments)
		e.m.record(sh, OpCallTool, e.toolKeys[k], time.Since(start), err)
	default:
		err = s.Ping(ctx)
		e.m.record(sh, OpPing, "", time.Since(start), err)
	}
	return err
}

// think draws a think time, uniform in [ThinkMin, ThinkMax].
func (e *engine) think(rng *rand.Rand) time.Duration {
	lo, hi := e.cfg.ThinkMin, e.cfg.ThinkMax
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// closeSession ends the session, also when ctx has ended, within
// closeTimeout.
func closeSession(ctx context.Context, s *Session) {
	if s.ID() == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	_ = s.Close(cctx) // best effort: the run's numbers are already taken
}

// sleep waits d, or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// report writes a progress line every progressEvery until done is closed.
func (e *engine) report(w io.Writer, started time.Time, done <-chan struct{}) {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	scratch := newHist()
	last, lastReq := started, int64(0)
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			req := e.m.requests.Load()
			rate := float64(req-lastReq) / now.Sub(last).Seconds()
			p95 := "-"
			if req > lastReq {
				p95 = fmtMs(e.m.recentP95(scratch))
			}
			last, lastReq = now, req
			fmt.Fprintf(w, "elapsed %s/%s users %d req/s %.0f errors %d p95 %s\n",
				now.Sub(started).Round(time.Second), e.cfg.Duration,
				e.m.active.Load(), rate, e.m.failures.Load(), p95)
		}
	}
}

func fmtMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.0fms", ms)
}

// result assembles the Result once every user has stopped.
func (e *engine) result(started, ended time.Time) *Result {
	cfg := e.cfg
	cfg.Tokens = nil // secrets stay out of results
	r := &Result{
		Config:       cfg,
		Started:      started,
		Ended:        ended,
		Requests:     e.m.requests.Load(),
		Failures:     e.m.failures.Load(),
		ErrorsByKind: make(map[string]int64, len(kindList)),
		Iterations:   e.m.iterations.Load(),
		Reinits:      e.m.reinits.Load(),
		InitRetries:  e.m.initRetries.Load(),
		AbortedUsers: e.m.aborted.Load(),
		PeakUsers:    int(e.m.peak.Load()),
		Latency:      e.m.latency(),
	}
	for i, k := range kindList {
		r.ErrorsByKind[k] = e.m.kinds[i].Load()
	}
	e.m.samplesMu.Lock()
	r.ErrorSamples = append([]string{}, e.m.samples...)
	e.m.samplesMu.Unlock()
	return r
}

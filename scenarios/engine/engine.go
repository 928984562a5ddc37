package engine

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// maxConcurrentCloses bounds the session closes in flight at once.
const maxConcurrentCloses = 256

// preflightTimeout bounds the preflight's initialize: a bad target is
// reported within seconds.
const preflightTimeout = 5 * time.Second

// newSession is a user's session, with a token source of its own when
// OAuth tokens are per user.
func (e *engine) newSession(token string) *mcp.Session {
	s := e.client.NewSession(token)
	if e.oauth != nil && e.oauth.PerUser {
		s.SetTokens(bearer.NewOAuthTokens(*e.oauth))
	}
	return s
}

// ErrNotMCP is returned (wrapped) by RunPlan when the target answers, but
// not as an MCP server over Streamable HTTP.
var ErrNotMCP = errors.New("target is not an MCP server (Streamable HTTP)")

// RunOptions says where a plan runs and where its live output goes.
type RunOptions struct {
	Target  string            // MCP endpoint URL; overrides the plan's target
	Tokens  []string          // per-user bearer tokens (user i uses Tokens[i%len]); override the plan's; never serialized
	Headers map[string]string // extra headers, added to (and overriding) the plan's
	RunDir  string            // if set: load.jsonl appended there every second
	// MetricsAddr, if set, serves live Prometheus metrics at /metrics on
	// this address (e.g. "127.0.0.1:9464") while the run lasts.
	MetricsAddr string
	// Progress gets a live line, redrawn each second on a terminal, or
	// plain periodic lines otherwise.
	Progress io.Writer
	// TLS configures https targets (nil: the system roots); see
	// mcp.TLSConfig for --ca-file and --insecure-skip-verify.
	TLS *tls.Config
	// OAuth, if set, gets the users' bearer tokens with the OAuth 2.1
	// client-credentials grant instead of Tokens (one token shared, or
	// one per user with OAuth.PerUser). It holds a secret: never
	// serialized.
	OAuth *bearer.OAuthConfig
	// Gatherer, if set, is served at MetricsAddr beside the engine's own
	// metrics (the probe's, say), so that one scrape gets both.
	Gatherer prometheus.Gatherer
	// Segment, if not the whole plan, plays that shard's slice of every
	// scenario (plan.Segment; segment.go).
	Segment plan.Segment
	// StartAt, if set, is when the load starts: after the preflight the
	// engine waits until then, so that shards on several machines start
	// together (at once if it has passed).
	StartAt time.Time
	// Live, if set, is handed the run's live snapshot (what MetricsAddr
	// serves) as the load starts: a worker process of leakbench run
	// --workers sends it to its parent, which serves all of them merged.
	Live func(snapshot func() live.Snapshot) `json:"-"`
	// SourceAddrs, if set, are the local addresses the users' connections
	// are dialed from, in turn (nil: the kernel's choice): past one
	// address's local ports (leakbench run --source-addrs, --workers).
	SourceAddrs []netip.Addr `json:"-"`
	// Spans, if set, gets every request as it ends (spans.go): an
	// OpenTelemetry exporter's request spans. Nil costs nothing.
	Spans SpanSink `json:"-"`
	// Watch, if set, follows the run live (watch.go): a dashboard.
	Watch Watcher `json:"-"`
}

// engine is one run of a plan.
type engine struct {
	cp      *plan.Compiled
	target  string
	m       *metrics
	client  *mcp.Client
	tokens  []string
	seed    int64
	runs    []*scenarioRun
	total   time.Duration // planned length: the latest scenario end
	started time.Time

	// closeSem bounds the DELETEs of users stopping at once (the end of a
	// 10,000-user run), so that closing does not open a connection each.
	closeSem chan struct{}
	// reqlog is the request index (requests.jsonl); nil without a run
	// directory.
	reqlog *requestLog
	// oauth, if set, gives users their tokens (per user with PerUser; the
	// client's shared source otherwise).
	oauth *bearer.OAuthConfig

	// segment is the shard of the plan this run plays (segment.go).
	segment plan.Segment

	// gen is the generator's self-check (generator.go).
	gen *genCheck

	// scaling records the changes of externally-controlled scenarios
	// (external.go).
	scaling scaling

	endOnce   sync.Once
	endReason atomic.Value // string
	stopRun   context.CancelFunc
}

// RunPlan plays plan against its target and returns what was measured.
// The error is non-nil only when the run could not be played (an invalid
// plan, a target out of bounds or not an MCP server, an unwritable run
// directory); how a played run ended is Result.EndReason: completed,
// interrupted (ctx ended: no new iterations, requests in flight get
// gracefulStop, sessions are closed) or aborted_by_threshold.
func RunPlan(ctx context.Context, pl *plan.Plan, opts RunOptions) (*rundir.LoadResult, error) {
	if pl == nil {
		return nil, fmt.Errorf("%w: no plan", plan.ErrInvalidPlan)
	}
	p := *pl
	if opts.Target != "" {
		p.Target = opts.Target
	}
	if len(opts.Tokens) > 0 {
		p.Tokens, p.TokensFile = opts.Tokens, ""
	}
	if len(opts.Headers) > 0 {
		p.Headers = maps.Clone(p.Headers)
		if p.Headers == nil {
			p.Headers = map[string]string{}
		}
		maps.Copy(p.Headers, opts.Headers)
	}
	cp, err := plan.Compile(&p)
	if err != nil {
		return nil, err
	}
	if p.Target == "" {
		return nil, fmt.Errorf("%w: no target: give target: in the scenario file or a target URL", plan.ErrInvalidPlan)
	}
	warnIgnoredProxy(opts.Progress, p.Target) // proxywarn.go
	if opts.OAuth != nil {
		if err := opts.OAuth.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", plan.ErrInvalidPlan, err)
		}
	}
	whole := cp
	cp, bases := opts.Segment.Apply(cp)
	e := newEngine(cp, p.Tokens, opts)
	e.useSegment(opts.Segment, bases, whole) // segment.go
	defer e.client.CloseIdleConnections()
	if err := e.preflight(ctx); err != nil {
		return nil, err
	}
	if !sleepUntil(ctx, opts.StartAt) {
		return nil, fmt.Errorf("interrupted before the run started (waiting for %s): %w", opts.StartAt.Format(time.RFC3339), ctx.Err())
	}
	out, err := openOutputs(opts, e)
	if err != nil {
		return nil, err
	}
	defer out.close()
	res := e.run(ctx, opts, out)
	resolved := p
	resolved.Tokens = nil // secrets stay out of results
	// The plan's own encoder masks what is secret in it (headers, the
	// target's credentials and secret query parameters).
	if res.Plan, err = json.Marshal(&resolved); err != nil {
		return nil, fmt.Errorf("record the plan played: %w", err)
	}
	if opts.RunDir != "" {
		// What leakbench merge adds shards up from (counts.go).
		if err := e.writeSeries(opts.RunDir, res, opts.StartAt); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func newEngine(cp *plan.Compiled, tokens []string, opts RunOptions) *engine {
	p := cp.Plan
	users := 0
	for _, cs := range cp.Scenarios {
		users += cs.Users
	}
	e := &engine{
		cp:       cp,
		target:   p.Target,
		m:        newMetrics(len(cp.Scenarios), tokens),
		tokens:   tokens,
		seed:     p.Seed,
		closeSem: make(chan struct{}, maxConcurrentCloses),
		oauth:    opts.OAuth,
		gen:      newGenCheck(),
	}
	copts := mcp.ClientOptions{RequestTimeout: p.Timeout.D(), MaxConns: users, Headers: p.Headers,
		SharedConns: p.SharedConnections, TLS: opts.TLS, SourceAddrs: opts.SourceAddrs}
	if e.oauth != nil && !e.oauth.PerUser {
		copts.Tokens = bearer.NewOAuthTokens(*e.oauth)
	}
	e.client = mcp.NewClient(p.Target, copts)
	base := 0
	for i, cs := range cp.Scenarios {
		sc := &scenario{CompiledScenario: cs, idx: uint16(i), timeout: cs.RequestTimeout, flow: numberSteps(lower(e.m, cs.Flow)), roundTrips: hasRoundTrips(cs.Flow)}
		e.runs = append(e.runs, &scenarioRun{e: e, cs: sc, sc: e.m.scen[i], vuBase: base, dataBase: base, dataUsers: cs.Users, vusTarget: cs.VUs, scaled: make(chan struct{}, 1)})
		base += cs.Users
		e.total = max(e.total, cs.StartTime.D()+cs.Length)
	}
	e.m.checks = newCheckStats(cp) // answers.go
	return e
}

// scenario is a compiled scenario as the engine plays it.
type scenario struct {
	*plan.CompiledScenario
	idx     uint16
	timeout time.Duration // the scenario's request timeout
	flow    []step
	// roundTrips: some step has inputs: or task: (roundtrips.go).
	roundTrips bool
}

// step is a compiled step as the engine plays it: with its operation's
// index and the metric id of its tool or prompt name, if that is fixed.
type step struct {
	plan.CompiledStep
	op      uint8
	nameID  uint32
	choices [][]step
	idx     int // position in the flow, depth first (requests.jsonl's step)
}

// lower turns compiled steps into the engine's, giving fixed tool and
// prompt names their ids up front.
func lower(m *metrics, steps []plan.CompiledStep) []step {
	out := make([]step, len(steps))
	for i, c := range steps {
		s := step{CompiledStep: c}
		if op, ok := opIndex(c.Kind); ok {
			s.op = op
		}
		if name, fixed := c.Name.Fixed(); fixed && (c.Kind == plan.OpCallTool || c.Kind == plan.OpGetPrompt) {
			s.nameID = m.nameID(name)
		}
		if c.Kind == plan.StepHTTP {
			s.op, s.nameID = opHTTP, m.nameID(httpName(c.HTTP)) // httpstep.go
		}
		for _, ch := range c.Choices {
			s.choices = append(s.choices, lower(m, ch))
		}
		out[i] = s
	}
	return out
}

// preflight opens and closes one session, so that a target that is not an
// MCP server, refuses the credentials or is down is reported as such
// before any load is sent.
func (e *engine) preflight(ctx context.Context) error {
	token := ""
	if len(e.tokens) > 0 {
		token = e.tokens[0]
	}
	s := e.newSession(token)
	defer s.CloseConn()
	s.Pin(e.runs[0].cs.Pin)
	// A target that does not answer within seconds is reported as such,
	// whatever the scenario's own request timeout.
	s.SetTimeouts(min(e.cp.Plan.Timeout.D(), preflightTimeout), 0)
	err := s.Initialize(withNewTrace(ctx)) // traced as every request, not indexed
	if err == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		_ = s.Close(cctx)
		return nil
	}
	target := redact.URL(e.target)
	var me *mcp.Error
	errors.As(err, &me)
	// The start that failed: the handshake, or server/discover (the
	// 2026-07-28 and auto settings).
	start := plan.OpInitialize
	if me != nil && me.Op == plan.OpDiscover {
		start = plan.OpDiscover
	}
	switch kind := mcp.Classify(err); {
	case kind == mcp.KindDNS:
		return fmt.Errorf("cannot reach target %s: its host name does not resolve (check the URL or DNS): %w", target, err)
	case kind == mcp.KindTLS:
		return fmt.Errorf("cannot reach target %s: TLS failed (for a private CA give --ca-file, for a self-signed staging server --insecure-skip-verify; an http port answers https with garbage): %w", target, err)
	case kind == mcp.KindConnRefused:
		return fmt.Errorf("cannot reach target %s: connection refused (nothing listens there; start the service or fix the URL): %w", target, err)
	case kind == mcp.KindAuth && me != nil && me.Status == http.StatusUnauthorized:
		// The token was fetched, refreshed once, and still refused.
		return fmt.Errorf("target %s refused the credentials (401 with a fresh token: check the token endpoint's audience and scopes): %w", target, err)
	case kind == mcp.KindAuth:
		return fmt.Errorf("cannot get a token for target %s: %w", target, err)
	case kind == mcp.KindTimeout:
		return fmt.Errorf("cannot reach target %s: no answer to %s within %s (a firewall dropping packets, a wrong address, or an overloaded service): %w", target, start, min(e.cp.Plan.Timeout.D(), preflightTimeout), err)
	case mcp.IsConnKind(kind):
		return fmt.Errorf("cannot reach target %s: %w", target, err)
	case kind == mcp.KindCanceled:
		return fmt.Errorf("interrupted before the run started: %w", err)
	case kind == mcp.KindHTTP && (me.Status == 401 || me.Status == 403):
		return fmt.Errorf("target %s refused the credentials (check tokens): %w", target, err)
	case kind == mcp.KindProtocol, kind == mcp.KindHTTP && (me.Status == 404 || me.Status == 405 || me.Status == 406 || me.Status == 415):
		return fmt.Errorf("%w: %s answered %s with %w", ErrNotMCP, target, start, err)
	}
	return fmt.Errorf("target %s failed %s: %w", target, start, err)
}

// run plays every scenario and assembles the result.
func (e *engine) run(ctx context.Context, opts RunOptions, out *outputs) *rundir.LoadResult {
	// soft: start nothing new (ctx ended, or a threshold aborted the run);
	// hard: abandon requests in flight.
	soft, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	hard, abortRun := context.WithCancel(context.WithoutCancel(ctx))
	defer abortRun()
	defer stopRun()
	e.stopRun = stopRun
	stopOnCtx := context.AfterFunc(ctx, func() { e.end(results.EndInterrupted) })
	defer stopOnCtx()

	e.started = time.Now()
	e.startWatch(opts.Watch) // watch.go
	mon := newMonitor(e, opts.Progress, out)
	var monWG sync.WaitGroup
	monDone := make(chan struct{})
	monWG.Go(func() { mon.loop(monDone) })

	var wg sync.WaitGroup
	for _, sr := range e.runs {
		wg.Go(func() { sr.run(soft, hard) })
	}
	wg.Wait()
	ended := time.Now()
	close(monDone)
	monWG.Wait()
	mon.finish(ended)
	e.end(results.EndCompleted)
	return e.result(ended)
}

// end records how the run ended (the first reason wins) and stops it.
func (e *engine) end(reason string) {
	e.endOnce.Do(func() { e.endReason.Store(reason) })
	if reason != results.EndCompleted && e.stopRun != nil {
		e.stopRun()
	}
}

// result assembles the Result once every user has stopped (package
// results sums up and judges what e counted).
func (e *engine) result(ended time.Time) *rundir.LoadResult {
	c := e.counts(ended)
	var dropped int64
	for _, sc := range c.State.Scenarios {
		dropped += sc.DroppedIterations
	}
	c.State.Generator = e.gen.result(dropped)
	r := results.Summarize(c)
	r.ScaleChanges = e.scaleChanges() // external.go
	return r
}

package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

const (
	// maxInitAttempts bounds how often a user whose credentials are refused
	// (401/403) tries to initialize in a row before it retires (counted in
	// Result.AbortedUsers): retrying cannot fix a bad token. Other failures
	// — timeouts, 5xx, refused connections — are what a struggling service
	// (a leaked pool) looks like, and real clients keep coming back: the
	// user retries with backoff until the scenario ends, so the load does
	// not silently vanish during an outage.
	maxInitAttempts = 5
	// minInitBackoff is the ceiling of the first wait before retrying a
	// failed initialize, doubling up to maxInitBackoff, so that zero
	// think time does not turn into a busy loop; each wait is drawn
	// below it (full jitter, see backoff).
	minInitBackoff = 100 * time.Millisecond
	maxInitBackoff = 2 * time.Second
	// closeTimeout bounds the DELETE that ends a user's session when it
	// stops, also after the run's context ended: sessions are released
	// whenever the target lets us.
	closeTimeout = 500 * time.Millisecond
	// maxExpFactor caps an exponential think time at this many means.
	maxExpFactor = 10
)

// vu is one virtual user: one MCP session, played by one goroutine.
type vu struct {
	sr *scenarioRun
	cs *scenario
	sc *scenCounters
	s  *mcp.Session
	sh *shard
	tc plan.Vars

	jobs            chan time.Time // arrival-rate: due times of the iterations handed to it
	timer           *time.Timer    // reused for think times
	nameBuf, argBuf []byte         // reused for rendering templates
	httpHead        []byte         // reused for http steps' headers
	bodyBuf         []byte         // ... and their answers

	live      bool // holds an initialized session
	expired   bool // lost its session to a 404: the next initialize is a re-init
	initFails int  // failed initializes in a row
	authFails int  // initializes refused for credentials in a row
	retired   bool // gave up after maxInitAttempts failed initializes
	began     bool // the current iteration sent a request or began a think
	// spoke lists the protocol versions the user's sessions spoke, each
	// counted once (protocol.go).
	spoke []string

	// coStart is the intended start of the current arrival-rate iteration:
	// its first request is measured from there, so that a late start is
	// charged to latency (coordinated omission, as wrk2 corrects it).
	coStart time.Time
	// due is when the step after a think time was due to start: the
	// next request's lateness is measured against it (generator.go).
	due time.Time

	// req is the request being sent: its trace, for the request index.
	req reqInfo

	// cacheOn: the scenario honours ttlMs; listen: the user's
	// notification stream, while open (roundtrips.go).
	cacheOn bool
	listen  *listening

	// dataUser is the user's index in its scenario (in the whole plan,
	// also in a segment), for the rows a data file drawn per iteration
	// gives it (answers.go).
	dataUser int
}

func newVU(sr *scenarioRun, user int, gen uint64) *vu {
	e := sr.e
	token := ""
	if n := len(e.tokens); n > 0 {
		token = e.tokens[user%n]
	}
	s := e.newSession(token)
	s.Pin(sr.cs.Pin)
	v := &vu{
		sr: sr, cs: sr.cs, sc: sr.sc, s: s, sh: e.m.shard(user),
		tc: plan.Vars{
			User:     user,
			Scenario: sr.cs.Name,
			Rand:     rand.New(rand.NewPCG(uint64(e.seed)^uint64(sr.cs.idx)<<48, uint64(user)<<20|gen)),
		},
	}
	v.setupUser(user)   // answers.go
	v.setupRoundTrips() // roundtrips.go
	return v
}

// life plays iterations until soft ends (or limit iterations are done, if
// limit > 0), then closes the session. Requests run under hard.
func (v *vu) life(soft, hard context.Context, limit int64) {
	v.sr.userStarted()
	defer v.sr.userStopped()
	defer v.closeSession(hard)
	if !v.cs.StartsWithInit && !v.startSession(soft, hard) {
		return
	}
	for n := int64(0); limit == 0 || n < limit; n++ {
		if soft.Err() != nil || hard.Err() != nil || v.retired {
			return
		}
		v.iterate(soft, hard, time.Time{})
	}
}

// startSession initializes, retrying with backoff, until it succeeds, the
// user retires or soft ends. It reports whether the user has a session.
func (v *vu) startSession(soft, hard context.Context) bool {
	for {
		if v.initOnce(hard, nil) {
			return true
		}
		if v.retired || hard.Err() != nil || !v.sleep(soft, v.backoff()) {
			return false
		}
	}
}

// credentialsRefused: the target answered 401 or 403.
func credentialsRefused(err error) bool {
	var e *mcp.Error
	return errors.As(err, &e) && (e.Status == 401 || e.Status == 403)
}

// backoff is the wait before the user's next initialize after
// initFails failures in a row: uniform in [0, min(maxInitBackoff,
// minInitBackoff·2^(initFails-1))) — "full jitter" (AWS, Exponential
// Backoff and Jitter). Without the jitter, users that failed together (a
// fault cutting them all off) retried together, in waves that shaped the
// faults profile's recovery figures. The draw is the user's seeded
// source: a run is repeatable under its seed.
func (v *vu) backoff() time.Duration {
	ceiling := min(minInitBackoff<<min(max(v.initFails-1, 0), 10), maxInitBackoff)
	return time.Duration(v.tc.Rand.Int64N(int64(ceiling)))
}

// initOnce starts a session (with the options of step c, if any) and
// reports whether it succeeded: the initialize handshake, or in the
// 2026-07-28 era a server/discover, as the scenario's protocol setting
// says; it is measured as the method it was (startOp).
func (v *vu) initOnce(hard context.Context, c *step) bool {
	if v.initFails > 0 {
		v.sc.initRetries.Add(1)
	}
	if v.expired {
		v.sc.reinits.Add(1)
		v.expired = false
	}
	v.stopListening() // the old session's stream, if any
	v.setOptions(c)
	start := v.reqStart()
	err := v.s.Initialize(v.traced(hard, c, ""))
	v.record(v.startOp(err), 0, start, err)
	switch kind := mcp.Classify(err); kind {
	case "":
		v.live, v.initFails, v.authFails = true, 0, 0
		v.countProtocol() // protocol.go
		v.startListening(hard)
		return true
	case mcp.KindCanceled, mcp.KindAborted:
		// Not the target's fault: no step towards retiring.
	default:
		v.initFails++
		if credentialsRefused(err) {
			v.authFails++
			if v.authFails >= maxInitAttempts {
				v.retired = true
				v.sc.retired.Add(1)
			}
		}
	}
	v.live = false
	return false
}

// iterate plays the flow once. intended is the iteration's due time for
// arrival-rate executors (zero otherwise). It reports whether the
// iteration began: false when the scenario's end came before its first
// step ran (no request sent, no think begun), which an arrival-rate
// schedule counts as dropped — its user reached it too late. One cut in
// a think or after a request is under way, neither completed nor dropped.
func (v *vu) iterate(soft, hard context.Context, intended time.Time) (begun bool) {
	v.began = false
	now := time.Now()
	start := now
	if !intended.IsZero() {
		start, v.coStart = intended, intended
		v.due = time.Time{}   // a think that ended the last iteration is long past
		v.late(intended, now) // generator.go
	}
	v.drawRow() // answers.go: a data file drawn per iteration
	ok := v.run(soft, hard, v.cs.flow)
	v.coStart = time.Time{}
	v.tc.Iteration++
	if ok {
		v.sr.e.m.recordIteration(v.sh, v.cs.idx, time.Since(start))
	}
	// Cut by the scenario's end before its first step ran (its user came
	// to it late): it never began.
	return ok || v.began || soft.Err() == nil
}

// run plays steps; it reports whether they all ran (false: the iteration
// was cut short by the end of the scenario or a failed initialize).
func (v *vu) run(soft, hard context.Context, steps []step) bool {
	for i := range steps {
		c := &steps[i]
		switch c.Kind {
		case plan.StepThink:
			if !v.think(soft, v.thinkTime(c.Think)) { // generator.go
				return false
			}
		case plan.StepChoose:
			k := sort.SearchInts(c.CumWeights, v.tc.Rand.IntN(c.CumWeights[len(c.CumWeights)-1])+1)
			if !v.run(soft, hard, c.choices[k]) {
				return false
			}
		case plan.StepHTTP:
			if !v.httpRequest(soft, hard, c) { // httpstep.go
				return false
			}
		case plan.StepEndSession:
			if v.tc.Rand.Float64() < c.Probability && v.live {
				if soft.Err() != nil {
					return false
				}
				v.endSession(hard)
			}
		default:
			if !v.request(soft, hard, c) {
				return false
			}
		}
	}
	return true
}

// request sends the MCP request of step c, initializing first if the user
// has no session. Nothing new is sent once soft has ended: requests in
// flight finish (within gracefulStop), no more start.
func (v *vu) request(soft, hard context.Context, c *step) bool {
	if soft.Err() != nil || hard.Err() != nil {
		return false
	}
	if c.op == opInitialize {
		if v.live {
			v.endSession(hard)
		}
		if !v.initOnce(hard, c) {
			v.sleep(soft, v.backoff())
			return false
		}
		return true
	}
	if !v.live && !v.initOnce(hard, nil) {
		v.sleep(soft, v.backoff())
		return false
	}
	if err := v.varsMissing(c); err != nil {
		v.sr.e.m.record(v.sh, seriesKey{scen: v.cs.idx, op: c.op, name: c.nameID}, -1, err) // not sent: no latency
		v.due = time.Time{}                                                                 // nor lateness
		return true
	}
	v.setOptions(c)
	v.beforeRequest(c) // roundtrips.go
	start := v.reqStart()
	var name uint32
	var err error
	ctx := v.traced(hard, c, "") // a new trace per request (requestlog.go)
	switch c.op {
	case opPing:
		err = v.s.Ping(ctx)
	case opListTools:
		err = v.s.ListTools(ctx)
	case opListResources:
		err = v.s.ListResources(ctx)
	case opListPrompts:
		err = v.s.ListPrompts(ctx)
	case opCallTool:
		n, id := v.name(c)
		name, v.req.name = id, n
		err = v.s.CallTool(ctx, n, v.args(c))
	case opGetPrompt:
		n, id := v.name(c)
		name, v.req.name = id, n
		err = v.s.GetPrompt(ctx, n, v.args(c))
	case opReadResource:
		err = v.s.ReadResource(ctx, c.URI.Render(&v.tc, &v.nameBuf))
	case opDiscover:
		err = v.s.Discover(ctx)
	}
	if err == nil && v.cacheHit(c.op) {
		v.s.ClearTrace()
		return true // served from the user's cache: nothing was sent
	}
	err = v.judge(c, v.s.Result(), err) // captures and checks (answers.go)
	v.record(c.op, name, start, err)
	if errors.Is(err, mcp.ErrSessionExpired) {
		v.live, v.expired = false, true
	}
	return !isCanceled(err)
}

// setOptions applies a step's timeout and abortAfter to the session (nil:
// the scenario's defaults).
func (v *vu) setOptions(c *step) {
	timeout, abortAfter := v.cs.timeout, time.Duration(0)
	if c != nil {
		if c.Timeout > 0 {
			timeout = c.Timeout
		}
		abortAfter = c.AbortAfter
	}
	v.s.SetTimeouts(timeout, abortAfter)
}

func (v *vu) name(c *step) (string, uint32) {
	if n, ok := c.Name.Fixed(); ok {
		return n, c.nameID
	}
	n := c.Name.Render(&v.tc, &v.nameBuf)
	return n, v.sr.e.m.nameID(n)
}

func (v *vu) args(c *step) []byte {
	if c.Args == nil {
		return nil
	}
	if b, ok := c.Args.Fixed(); ok {
		return b
	}
	v.argBuf = c.Args.AppendJSON(v.argBuf[:0], &v.tc)
	return v.argBuf
}

// reqStart is when the next request counts from: now, or the intended
// start of the iteration for its first request. A request that had a due
// time (the first of an arrival-rate iteration, the first after a think
// time) records how late it is sent (generator.go).
func (v *vu) reqStart() time.Time {
	if !v.coStart.IsZero() {
		t := v.coStart
		v.coStart = time.Time{}
		v.late(t, time.Now())
		return t
	}
	now := time.Now()
	if !v.due.IsZero() {
		v.late(v.due, now)
		v.due = time.Time{}
	}
	return now
}

func (v *vu) record(op uint8, name uint32, start time.Time, err error) {
	v.began = true
	v.s.ClearTrace() // the request's trace (traced) ends with it
	v.sr.e.m.record(v.sh, seriesKey{scen: v.cs.idx, op: op, name: name}, time.Since(start), err)
	if l := v.sr.e.reqlog; l != nil && op != opDelete { // a DELETE carries no trace
		l.add(v, op, err)
	}
}

// endSession ends the session with DELETE, measured; the next request
// initializes a new one. In the 2026-07-28 era there is no session to
// end: nothing is sent and nothing counted, and the user goes on as it
// was.
func (v *vu) endSession(hard context.Context) {
	if v.s.Era() == mcp.Era2026 {
		return
	}
	v.stopListening()
	v.setOptions(nil)
	v.s.ClearTrace() // a DELETE carries no trace
	// The DELETE is the first request sent after a think or an
	// iteration's due time, and its lateness is taken here (reqStart):
	// taken at the initialize that follows, it would count the DELETE's
	// wait on the target as the generator's own delay — the incident
	// profile's "schedule late by p99 30.0 s" was its DELETEs waiting on
	// a starved gateway up to the request timeout.
	start := v.reqStart()
	err := v.s.Close(hard)
	v.record(opDelete, 0, start, err)
	v.live = false
	v.sc.ended.Add(1)
}

// closeSession ends the session when the user stops, also after hard has
// ended, within closeTimeout. It is not measured: the run is over for
// this user.
func (v *vu) closeSession(hard context.Context) {
	defer v.s.CloseConn() // the user's own connection, if it has one
	v.stopListening()
	v.s.ClearTrace()
	if v.s.ID() == "" {
		return
	}
	sem := v.sr.e.closeSem
	sem <- struct{}{}
	defer func() { <-sem }()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), closeTimeout)
	defer cancel()
	v.s.SetTimeouts(closeTimeout, 0)
	_ = v.s.Close(ctx) // best effort: the run's numbers are already taken
	v.live = false
}

// thinkTime draws a pause from t.
func (v *vu) thinkTime(t plan.Think) time.Duration {
	switch t.Distribution {
	case plan.ThinkUniform:
		if t.Max <= t.Min {
			return t.Min.D()
		}
		return t.Min.D() + time.Duration(v.tc.Rand.Int64N(int64(t.Max-t.Min)+1))
	case plan.ThinkExponential:
		return time.Duration(min(v.tc.Rand.ExpFloat64(), maxExpFactor) * float64(t.Duration))
	}
	return t.Duration.D()
}

// sleep waits d, or until ctx ends; it reports whether ctx is still live.
func (v *vu) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if v.timer == nil {
		v.timer = time.NewTimer(d)
	} else {
		v.timer.Reset(d)
	}
	select {
	case <-ctx.Done():
		v.timer.Stop()
		return false
	case <-v.timer.C:
		return true
	}
}

// isCanceled reports whether err is the run's own context ending.
func isCanceled(err error) bool {
	if err == nil {
		return false // before errors.As: its target would escape, an allocation per request
	}
	var e *mcp.Error
	return errors.As(err, &e) && e.Kind == mcp.KindCanceled
}

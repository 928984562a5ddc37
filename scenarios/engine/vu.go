package scenarios

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"time"
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
	// minInitBackoff is the first wait before retrying a failed
	// initialize, doubling up to maxInitBackoff, so that zero think time
	// does not turn into a busy loop.
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
	cs *cscenario
	sc *scenCounters
	s  *Session
	sh *shard
	tc tmplCtx

	jobs            chan time.Time // arrival-rate: due times of the iterations handed to it
	timer           *time.Timer    // reused for think times
	nameBuf, argBuf []byte         // reused for rendering templates

	live      bool // holds an initialized session
	expired   bool // lost its session to a 404: the next initialize is a re-init
	initFails int  // failed initializes in a row
	authFails int  // initializes refused for credentials in a row
	retired   bool // gave up after maxInitAttempts failed initializes

	// coStart is the intended start of the current arrival-rate iteration:
	// its first request is measured from there, so that a late start is
	// charged to latency (coordinated omission, as wrk2 corrects it).
	coStart time.Time
}

func newVU(sr *scenarioRun, user int, gen uint64) *vu {
	e := sr.e
	token := ""
	if n := len(e.tokens); n > 0 {
		token = e.tokens[user%n]
	}
	s := e.client.NewSession(token)
	s.pin = sr.cs.pin
	return &vu{
		sr: sr, cs: sr.cs, sc: sr.sc, s: s, sh: e.m.shard(user),
		tc: tmplCtx{
			user:     user,
			scenario: sr.cs.Name,
			rng:      rand.New(rand.NewPCG(uint64(e.seed)^uint64(sr.cs.idx)<<48, uint64(user)<<20|gen)),
		},
	}
}

// life plays iterations until soft ends (or limit iterations are done, if
// limit > 0), then closes the session. Requests run under hard.
func (v *vu) life(soft, hard context.Context, limit int64) {
	v.sr.userStarted()
	defer v.sr.userStopped()
	defer v.closeSession(hard)
	if !v.cs.firstInit && !v.startSession(soft, hard) {
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
	var e *Error
	return errors.As(err, &e) && (e.Status == 401 || e.Status == 403)
}

func (v *vu) backoff() time.Duration {
	return min(minInitBackoff<<min(max(v.initFails-1, 0), 10), maxInitBackoff)
}

// initOnce sends one initialize handshake (with the options of step c, if
// any) and reports whether it succeeded.
func (v *vu) initOnce(hard context.Context, c *cstep) bool {
	if v.initFails > 0 {
		v.sc.initRetries.Add(1)
	}
	if v.expired {
		v.sc.reinits.Add(1)
		v.expired = false
	}
	v.setOptions(c)
	start := v.reqStart()
	err := v.s.Initialize(hard)
	v.record(opInitialize, 0, start, err)
	switch kind := Classify(err); kind {
	case "":
		v.live, v.initFails, v.authFails = true, 0, 0
		return true
	case KindCanceled, KindAborted:
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
// arrival-rate executors (zero otherwise).
func (v *vu) iterate(soft, hard context.Context, intended time.Time) {
	start := time.Now()
	if !intended.IsZero() {
		start, v.coStart = intended, intended
	}
	ok := v.run(soft, hard, v.cs.flow)
	v.coStart = time.Time{}
	v.tc.iteration++
	if ok {
		v.sr.e.m.recordIteration(v.sh, v.cs.idx, time.Since(start))
	}
}

// run plays steps; it reports whether they all ran (false: the iteration
// was cut short by the end of the scenario or a failed initialize).
func (v *vu) run(soft, hard context.Context, steps []cstep) bool {
	for i := range steps {
		c := &steps[i]
		switch c.kind {
		case StepThink:
			if !v.sleep(soft, v.thinkTime(c.think)) {
				return false
			}
		case StepChoose:
			k := sort.SearchInts(c.cumWeights, v.tc.rng.IntN(c.cumWeights[len(c.cumWeights)-1])+1)
			if !v.run(soft, hard, c.choices[k]) {
				return false
			}
		case StepEndSession:
			if v.tc.rng.Float64() < c.probability && v.live {
				if soft.Err() != nil {
					return false
				}
				v.endSession(hard)
			}
		case stepLegacy:
			if !v.request(soft, hard, v.cs.legacy.next(v)) {
				return false
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
func (v *vu) request(soft, hard context.Context, c *cstep) bool {
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
	v.setOptions(c)
	start := v.reqStart()
	var name uint32
	var err error
	switch c.op {
	case opPing:
		err = v.s.Ping(hard)
	case opListTools, opListResources, opListPrompts:
		err = v.s.listPages(hard, opNames[c.op], nil)
	case opCallTool:
		var n string
		n, name = v.name(c)
		_, err = v.s.callTool(hard, n, v.args(c), &toolOutcome{})
	case opGetPrompt:
		var n string
		n, name = v.name(c)
		_, err = v.s.call(hard, OpGetPrompt, nameParams(n, v.args(c)), &objectResult{})
	case opReadResource:
		_, err = v.s.call(hard, OpReadResource, uriParams(c.uri.render(&v.tc, &v.nameBuf)), &objectResult{})
	}
	v.record(c.op, name, start, err)
	if errors.Is(err, ErrSessionExpired) {
		v.live, v.expired = false, true
	}
	return !isCanceled(err)
}

// setOptions applies a step's timeout and abortAfter to the session (nil:
// the scenario's defaults).
func (v *vu) setOptions(c *cstep) {
	v.s.timeout, v.s.abortAfter = v.cs.timeout, 0
	if c != nil {
		if c.timeout > 0 {
			v.s.timeout = c.timeout
		}
		v.s.abortAfter = c.abortAfter
	}
}

func (v *vu) name(c *cstep) (string, uint32) {
	if c.name.n == nil {
		return c.name.fixed, c.nameID
	}
	n := c.name.render(&v.tc, &v.nameBuf)
	return n, v.sr.e.m.nameID(n)
}

func (v *vu) args(c *cstep) []byte {
	if c.args == nil {
		return nil
	}
	if c.args.constant() {
		return c.args.json
	}
	v.argBuf = c.args.appendJSON(v.argBuf[:0], &v.tc)
	return v.argBuf
}

// reqStart is when the next request counts from: now, or the intended
// start of the iteration for its first request.
func (v *vu) reqStart() time.Time {
	if !v.coStart.IsZero() {
		t := v.coStart
		v.coStart = time.Time{}
		return t
	}
	return time.Now()
}

func (v *vu) record(op uint8, name uint32, start time.Time, err error) {
	v.sr.e.m.record(v.sh, seriesKey{scen: v.cs.idx, op: op, name: name}, time.Since(start), err)
}

// endSession ends the session with DELETE, measured; the next request
// initializes a new one.
func (v *vu) endSession(hard context.Context) {
	v.setOptions(nil)
	start := time.Now()
	err := v.s.Close(hard)
	v.record(opDelete, 0, start, err)
	v.live = false
	v.sc.ended.Add(1)
}

// closeSession ends the session when the user stops, also after hard has
// ended, within closeTimeout. It is not measured: the run is over for
// this user.
func (v *vu) closeSession(hard context.Context) {
	if v.s.ID() == "" || v.sr.e.hardAbort.Load() {
		return
	}
	sem := v.sr.e.closeSem
	sem <- struct{}{}
	defer func() { <-sem }()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hard), closeTimeout)
	defer cancel()
	v.s.timeout, v.s.abortAfter = closeTimeout, 0
	_ = v.s.Close(ctx) // best effort: the run's numbers are already taken
	v.live = false
}

// thinkTime draws a pause from t.
func (v *vu) thinkTime(t Think) time.Duration {
	switch t.Distribution {
	case ThinkUniform:
		if t.Max <= t.Min {
			return t.Min.D()
		}
		return t.Min.D() + time.Duration(v.tc.rng.Int64N(int64(t.Max-t.Min)+1))
	case ThinkExponential:
		return time.Duration(min(v.tc.rng.ExpFloat64(), maxExpFactor) * float64(t.Duration))
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

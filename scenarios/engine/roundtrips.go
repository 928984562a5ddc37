package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// What users do with MCP 2026-07-28 beyond plain requests, and how it is
// measured:
//   - ttlMs caching (a scenario's cache:, honour by default): a list or
//     resources/read step whose last result is still fresh sends nothing
//     and counts as a cache hit, not as a request. Steps with captures or
//     checks always send, since the cache keeps no results to judge;
//   - input_required (a step's inputs:): the retries count as input
//     round trips; the step's latency is the whole exchange;
//   - tasks (a tools/call step's task:): each tasks/get, tasks/update and
//     tasks/cancel is a request of its own method; the tools/call's
//     latency is the task's, end to end; tasks are counted by how they
//     ended;
//   - notification streams (a scenario's listen: true): each user keeps
//     one open beside its requests, on a connection of its own; each
//     opening is a request of method subscriptions/listen (measured to
//     its answer; a refused one is a failure), and streams, resumptions
//     and notifications are counted.

// featureCounts are one scenario's counts of those features.
type featureCounts struct {
	cacheHits                  [numRequestOps]atomic.Int64
	inputRounds                atomic.Int64
	created, completed, failed atomic.Int64
	cancelled, givenUp         atomic.Int64
	streams, resumed, noStream atomic.Int64
	// notices: notifications/cancelled sent (accepted or refused),
	// refused, and not delivered (metrics.record).
	noticesSent, noticesRefused, noticesFailed atomic.Int64
	eventsMu                                   sync.Mutex
	events                                     map[string]int64
}

// snapshot returns the counts (nil: nothing of the kind happened).
func (fc *featureCounts) snapshot() *rundir.FeatureStats {
	f := &rundir.FeatureStats{}
	own := &rundir.FeatureStats{InputRoundTrips: fc.inputRounds.Load()}
	for op := range fc.cacheHits {
		if n := fc.cacheHits[op].Load(); n > 0 {
			if own.CacheHits == nil {
				own.CacheHits = map[string]int64{}
			}
			own.CacheHits[opNames[op]] = n
		}
	}
	if n := fc.created.Load(); n > 0 {
		own.Tasks = &rundir.TaskStats{Created: n, Completed: fc.completed.Load(), Failed: fc.failed.Load(),
			Cancelled: fc.cancelled.Load(), GivenUp: fc.givenUp.Load()}
	}
	if sent, failed := fc.noticesSent.Load(), fc.noticesFailed.Load(); sent > 0 || failed > 0 {
		own.CancelNotices = &rundir.CancelNoticeStats{Sent: sent, Refused: fc.noticesRefused.Load(), Failed: failed}
	}
	fc.eventsMu.Lock()
	if s := fc.streams.Load(); s > 0 || fc.noStream.Load() > 0 || len(fc.events) > 0 {
		own.Listen = &rundir.ListenStats{Streams: s, Resumed: fc.resumed.Load(), Unsupported: fc.noStream.Load()}
		for k, v := range fc.events {
			if own.Listen.Events == nil {
				own.Listen.Events = map[string]int64{}
			}
			own.Listen.Events[k] = v
		}
	}
	fc.eventsMu.Unlock()
	f.Add(own)
	if f.Empty() {
		return nil
	}
	return f
}

// maxEventMethods bounds the notification methods counted apart (a
// server could send any); the rest count as otherName.
const maxEventMethods = 32

func (fc *featureCounts) event(method string) {
	fc.eventsMu.Lock()
	defer fc.eventsMu.Unlock()
	if fc.events == nil {
		fc.events = map[string]int64{}
	}
	if _, ok := fc.events[method]; !ok && len(fc.events) >= maxEventMethods {
		method = otherName
	}
	fc.events[method]++
}

// hasRoundTrips reports whether a step of steps (choices included) has
// inputs: or task:.
func hasRoundTrips(steps []plan.CompiledStep) bool {
	for _, c := range steps {
		if c.RoundTrips != nil {
			return true
		}
		for _, ch := range c.Choices {
			if hasRoundTrips(ch) {
				return true
			}
		}
	}
	return false
}

// setupRoundTrips gives a new user's session what its scenario's steps
// use.
func (v *vu) setupRoundTrips() {
	v.cacheOn = v.cs.Cache != plan.CacheIgnore
	if v.cs.roundTrips {
		v.s.Observe(v.observe)
	}
}

// observe records one extra round trip of a step (mcp.SubRequest).
func (v *vu) observe(r mcp.SubRequest) {
	fc := &v.sc.features
	switch {
	case r.Retry:
		fc.inputRounds.Add(1)
	case r.Method != "":
		if op, ok := opIndex(r.Method); ok {
			v.sr.e.m.record(v.sh, seriesKey{scen: v.cs.idx, op: op}, time.Since(r.Start), r.Err)
		}
	case r.Task == mcp.TaskCreated:
		fc.created.Add(1)
	case r.Task == mcp.TaskCompleted:
		fc.completed.Add(1)
	case r.Task == mcp.TaskFailed:
		fc.failed.Add(1)
	case r.Task == mcp.TaskCancelled:
		fc.cancelled.Add(1)
	case r.Task == mcp.TaskGivenUp:
		fc.givenUp.Add(1)
	}
}

// beforeRequest sets what step c adds to its request: its inputs and
// task, and whether a fresh cached result may stand in for it.
func (v *vu) beforeRequest(c *step) {
	v.s.Next(c.RoundTrips)
	v.s.SetCache(v.cacheOn && len(c.Captures) == 0 && len(c.Checks) == 0)
}

// cacheHit reports whether the step just played was served from the
// user's cache, counting it if so.
func (v *vu) cacheHit(op uint8) bool {
	switch op {
	case opListTools, opListResources, opListPrompts, opReadResource:
		if v.s.Cached() {
			v.sc.features.cacheHits[op].Add(1)
			return true
		}
	}
	return false
}

// listening is a user's notification stream, read by a goroutine of its
// own.
type listening struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startListening opens the user's notification stream for its new
// session, if its scenario listens.
func (v *vu) startListening(hard context.Context) {
	if !v.cs.Listen || v.listen != nil {
		return
	}
	fc := &v.sc.features
	m, sh, key := v.sr.e.m, v.sh, seriesKey{scen: v.cs.idx, op: opListen}
	l := v.s.Listener(mcp.ListenHooks{
		// An opening is a request of method subscriptions/listen (the
		// 2025 GET too), measured to its answer's head.
		Opened: func(took time.Duration) {
			fc.streams.Add(1)
			m.record(sh, key, took, nil)
		},
		Resumed: func() { fc.resumed.Add(1) },
		Message: fc.event,
	})
	ctx, cancel := context.WithCancel(hard)
	ln := &listening{cancel: cancel, done: make(chan struct{})}
	v.listen = ln
	go func() {
		defer close(ln.done)
		switch err := l.Listen(ctx); {
		case errors.Is(err, mcp.ErrNoStream):
			fc.noStream.Add(1)
		case err != nil:
			m.record(sh, key, -1, err) // refused: a failure with no latency
		}
	}()
}

// stopListening closes the user's stream, if open, and waits for its
// goroutine.
func (v *vu) stopListening() {
	if ln := v.listen; ln != nil {
		ln.cancel()
		<-ln.done
		v.listen = nil
	}
}

package gateway

import (
	"context"
	"errors"
)

// Real leaks often sit on a rare path: one request in a thousand reaches
// the error that skips the close (ContextForge #2550 saw 182
// idle-in-transaction timeouts on one replica only after a while at about
// 1,800 requests per second). commit-in-finally-rare is #1885's cleanup on
// such a path, under a load that never gives up: one request in
// Config.RareLeakEvery meets an error whose handling cancels the request's
// context before the cleanup runs — a service's own deadline firing, a
// failed upstream call aborting the request. The commit then fails on the
// cancelled context and commit-in-finally skips the close:
//
//	finally:
//	    db.commit()   # raises: the request was cancelled
//	    db.close()    # never runs
//
// The client got its answer; nothing failed on its side. A 20-second
// sign-off at 100 requests per second with one in 500 leaks 4 sessions,
// below anything it judges; a soak sees the service's connections climb
// and stay up after the load (leakbench soak).

// errRarePath is the error one request in RareLeakEvery meets.
var errRarePath = errors.New("rare error path: the request was cancelled before its cleanup")

// rarePath reports whether this request is the one in RareLeakEvery that
// takes the error path; the count is the gateway's, over every scoped
// request, so the leak rate is exact whatever the load's shape.
func (g *Gateway) rarePath() bool {
	return g.scoped.Add(1)%uint64(g.cfg.RareLeakEvery) == 0
}

// cleanupContext is the context the rare variant's cleanup runs with: the
// request's, or, on the rare error path, one cancelled by that error.
func cleanupContext(ctx context.Context, rare bool) context.Context {
	if !rare {
		return ctx
	}
	c, cancel := context.WithCancelCause(ctx)
	cancel(errRarePath)
	return c
}

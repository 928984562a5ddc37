package engine

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// TestFirstRefusalIsRecorded: a target that stops accepting connections
// partway through a ramp (its users connected so far keep theirs). The
// run says when refused connections began and how many users were
// playing then, and records a first failure for every kind it counted,
// and only for those.
func TestFirstRefusalIsRecorded(t *testing.T) {
	checkLeaks(t)
	srv, url := serveTestMCP(t, mcptest.Options{Stateless: true})
	p := mustParse(t, `
timeout: 2s
scenarios:
  s:
    executor: ramping-vus
    startVUs: 1
    stages: [{duration: 1600ms, target: 16}, {duration: 400ms, target: 16}]
    gracefulRampDown: 100ms
    flow: [ping, think: 50ms]
`)
	var closedAt atomic.Int64
	stop := time.AfterFunc(800*time.Millisecond, func() {
		closedAt.Store(time.Now().UnixNano())
		srv.Listener.Close() // no more connections accepted: refused
	})
	defer stop.Stop()
	res, err := RunPlan(context.Background(), p, RunOptions{Target: url})
	if err != nil {
		t.Fatal(err)
	}
	if closedAt.Load() == 0 {
		t.Fatal("the run ended before the target stopped accepting")
	}
	closed := time.Unix(0, closedAt.Load())
	f, ok := res.FirstErrors[mcp.KindConnRefused]
	if !ok {
		t.Fatalf("no first refusal recorded; errors %v, first errors %+v", res.ErrorsByKind, res.FirstErrors)
	}
	if f.At.Before(closed) {
		t.Errorf("first refusal at %s, before the target stopped accepting at %s", f.At.Format(time.StampMicro), closed.Format(time.StampMicro))
	}
	// A user joins every 100 ms, dialing at once.
	if d := f.At.Sub(closed); d > time.Second {
		t.Errorf("first refusal %s after the target stopped accepting, want the next user's dial", d)
	}
	if want := f.At.Sub(res.Started).Seconds(); math.Abs(f.ElapsedSeconds-want) > 0.001 {
		t.Errorf("elapsed_seconds %.3f, want %.3f (at − started)", f.ElapsedSeconds, want)
	}
	// 1 user at the start, one more every 100 ms: about 8 at 800 ms.
	if f.ActiveUsers < 2 || f.ActiveUsers > 15 {
		t.Errorf("%d users active at the first refusal, want the ramp's count then (about 8)", f.ActiveUsers)
	}
	t.Logf("first refusal %.3f s into the load (%s after the close), %d users active; errors %v", f.ElapsedSeconds, f.At.Sub(closed).Round(time.Microsecond), f.ActiveUsers, res.ErrorsByKind)
	for kind, n := range res.ErrorsByKind {
		_, first := res.FirstErrors[kind]
		failure := n > 0 && kind != mcp.KindCanceled && kind != mcp.KindAborted
		if first != failure {
			t.Errorf("kind %s: %d counted, first failure recorded: %v", kind, n, first)
		}
	}
}

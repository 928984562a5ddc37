package engine

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/tty"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestCoordinatedOmission: the first request of an arrival-rate iteration
// is measured from when the iteration was due, so a late start shows up as
// latency instead of vanishing (wrk2's correction).
func TestCoordinatedOmission(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p := mustParse(t, "scenarios:\n  s: {executor: constant-arrival-rate, rate: 1, duration: 1s, maxVUs: 1, flow: [ping, ping]}\n")
	p.Target = srv.URL
	cp, err := plan.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(cp, nil, RunOptions{})
	defer e.client.CloseIdleConnections()
	sr := e.runs[0]
	ctx := context.Background()
	v := newVU(sr, 0, 0)
	if !v.startSession(ctx, ctx) {
		t.Fatal("no session")
	}
	const late = 80 * time.Millisecond
	v.iterate(ctx, ctx, time.Now().Add(-late))
	v.closeSession(ctx)
	lat := e.result(time.Now()).Latency
	ping := lat[plan.OpPing]
	if ping.Count != 2 || ping.MaxMs < float64(late.Milliseconds()) || ping.MinMs >= float64(late.Milliseconds()) {
		t.Errorf("ping latencies %+v: want one (the first) to include the %s of lateness", ping, late)
	}
	if it := e.result(time.Now()).IterationDuration; it.Count != 1 || it.MinMs < float64(late.Milliseconds()) {
		t.Errorf("iteration duration %+v: want it measured from the due time", it)
	}
}

// TestProgressOnTerminal: on a terminal the line is redrawn in place.
func TestProgressOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	if tty.Is(&buf) {
		t.Fatal("a buffer is not a terminal")
	}
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, duration: 10s, flow: [ping]}\n")
	p.Target = "http://127.0.0.1:1/mcp"
	cp, _ := plan.Compile(p)
	e := newEngine(cp, nil, RunOptions{})
	e.started = time.Now()
	m := newMonitor(e, &buf, nil)
	m.tty = true
	m.tick(e.started.Add(time.Second))
	m.tick(e.started.Add(2 * time.Second))
	m.finish(e.started.Add(2500 * time.Millisecond))
	out := buf.String()
	if strings.Count(out, "\r\x1b[2K") != 3 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 ||
		!strings.Contains(out, "elapsed 2s/10s users 0 req/s 0 errors 0 p95 -") {
		t.Errorf("terminal output %q", out)
	}
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

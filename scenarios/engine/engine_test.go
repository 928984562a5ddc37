package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// checkLeaks registers, before anything else is cleaned up, a check that
// the test left no goroutine behind; it runs after every other cleanup.
func checkLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// TestRunAgainstSDKServer plays a ramping-vus scenario of think, then
// tools/list or a tools/call picked by weight, against the go-sdk server.
func TestRunAgainstSDKServer(t *testing.T) {
	const users = 20
	for _, mode := range mcptest.Modes[:2] { // stateful SSE and JSON: sessions, DELETE
		t.Run(mode.Name, func(t *testing.T) {
			checkLeaks(t)
			o := mode.Opts
			o.ExtraTools = 1 // tool00
			srv := mcptest.Start(t, o)
			p := mustParse(t, `
seed: 1
tokens: [tok-a, tok-b]
scenarios:
  default:
    executor: ramping-vus
    startVUs: 0
    stages: [{duration: 200ms, target: 20}, {duration: 1800ms, target: 20}]
    gracefulStop: 10s
    flow:
      - think: {uniform: [10ms, 50ms]}
      - choose:
          - {weight: 1, steps: [tools/list]}
          - {weight: 3, steps: [{tools/call: {name: echo, arguments: {text: hi}}}]}
          - {weight: 1, steps: [{tools/call: tool00}]}
`)
			var progress bytes.Buffer
			start := time.Now()
			res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, Progress: &progress})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("RunPlan: %v", err)
			}
			if took < 2*time.Second || took > 2*time.Second+mcp.DefaultRequestTimeout+time.Second {
				t.Errorf("RunPlan took %s for a 2s run", took)
			}
			if res.Requests == 0 || res.Iterations == 0 {
				t.Fatalf("requests %d iterations %d", res.Requests, res.Iterations)
			}
			if res.Failures != 0 || res.ErrorRate() != 0 {
				t.Errorf("failures %d (%v), samples %q", res.Failures, res.ErrorsByKind, res.ErrorSamples)
			}
			if res.PeakUsers != users {
				t.Errorf("peak users %d, want %d", res.PeakUsers, users)
			}
			if res.Interrupted || res.Reinits != 0 || res.AbortedUsers != 0 {
				t.Errorf("interrupted %v reinits %d aborted %d", res.Interrupted, res.Reinits, res.AbortedUsers)
			}
			for _, op := range []string{plan.OpInitialize, plan.OpListTools, plan.OpCallTool, "tools/call:echo", "tools/call:tool00", rundir.OpAll} {
				if res.Latency[op].Count == 0 {
					t.Errorf("no latency recorded for %q", op)
				}
			}
			if res.Latency[plan.OpInitialize].Count != users {
				t.Errorf("initialize count %d, want %d", res.Latency[plan.OpInitialize].Count, users)
			}
			if got := res.Latency[rundir.OpAll].Count; got != res.Requests {
				t.Errorf("all count %d, requests %d", got, res.Requests)
			}
			calls := res.Latency[plan.OpCallTool].Count
			if echo, other := res.Latency["tools/call:echo"].Count, res.Latency["tools/call:tool00"].Count; echo+other != calls || echo < other {
				t.Errorf("tools/call %d = echo %d + tool00 %d? (weights 3:1)", calls, echo, other)
			}
			if l := res.Latency[rundir.OpAll]; !(l.MinMs <= l.P50Ms && l.P50Ms <= l.P95Ms && l.P95Ms <= l.MaxMs && l.MaxMs > 0) {
				t.Errorf("latency stats out of order: %+v", l)
			}
			if n := srv.Sessions(); n != 0 {
				t.Errorf("%d server sessions left: users did not DELETE them", n)
			}
			line := regexp.MustCompile(`^elapsed \d+s/2s users \d+ req/s \d+ errors 0 p95 (\d+(\.\d)?ms|-)$`)
			lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
			if len(lines) == 0 || !line.MatchString(lines[0]) {
				t.Errorf("progress lines %q", lines)
			}
			want := rundir.PlanSummary{Target: srv.URL, Users: users, Duration: 2 * time.Second, RequestTimeout: mcp.DefaultRequestTimeout}
			if res.Config != want {
				t.Errorf("config %+v, want %+v", res.Config, want)
			}
			// Tokens stay out of the result.
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(js, []byte("tok-a")) || bytes.Contains(res.Plan, []byte("tok-a")) {
				t.Errorf("result carries tokens: %s", js)
			}
		})
	}
}

// TestRunStopsOnCancel: every user is stuck in a slow tools/call when the
// run's context is cancelled; with gracefulStop 0 the run abandons them at
// once instead of waiting for their 10 s request timeout.
func TestRunStopsOnCancel(t *testing.T) {
	checkLeaks(t)
	const users = 10
	srv := mcptest.Start(t, mcptest.Options{SDK: true, SSE: true})
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 10, duration: 1m, gracefulStop: 0s, flow: [{tools/call: slow}]}\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := RunPlan(ctx, p, RunOptions{Target: srv.URL})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("RunPlan returned %s after start, %s after cancel", took, took-500*time.Millisecond)
	}
	if err != nil || res == nil || !res.Interrupted || res.EndReason != results.EndInterrupted {
		t.Fatalf("RunPlan: res %+v, err %v; want an interrupted result", res, err)
	}
	if res.ErrorsByKind[mcp.KindCanceled] != users || res.Failures != 0 {
		t.Errorf("errors %v failures %d: want %d canceled, no failure", res.ErrorsByKind, res.Failures, users)
	}
	if res.Latency[plan.OpCallTool].Count != 0 {
		t.Errorf("canceled calls went into the histogram: %+v", res.Latency[plan.OpCallTool])
	}
}

// TestRunLetsInFlightRequestsFinish: at the end of the scenario a request
// in flight is not cancelled but, within gracefulStop, runs into its own
// timeout.
func TestRunLetsInFlightRequestsFinish(t *testing.T) {
	checkLeaks(t)
	const users, timeout = 2, 700 * time.Millisecond
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p := mustParse(t, "timeout: 700ms\nscenarios:\n  s: {executor: constant-vus, vus: 2, duration: 300ms, gracefulStop: 1200ms, flow: [{tools/call: slow}]}\n")
	start := time.Now()
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < timeout || took > timeout+2*time.Second {
		t.Errorf("RunPlan took %s; want about the request timeout (%s)", took, timeout)
	}
	if res.ErrorsByKind[mcp.KindTimeout] != users || res.ErrorsByKind[mcp.KindCanceled] != 0 {
		t.Errorf("errors %v; want %d timeouts, no cancel", res.ErrorsByKind, users)
	}
	if res.Failures != users || res.ErrorRate() <= 0 {
		t.Errorf("failures %d rate %v", res.Failures, res.ErrorRate())
	}
}

// TestRunReinitializesExpiredSessions: the server drops idle sessions faster
// than users think, so every request after a think finds its session gone.
func TestRunReinitializesExpiredSessions(t *testing.T) {
	checkLeaks(t)
	const users = 2
	srv := mcptest.Start(t, mcptest.Options{SDK: true, SessionTimeout: 50 * time.Millisecond})
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 1s, flow: [think: {uniform: [150ms, 200ms]}, ping]}\n")
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	// A session lost to a 404 is re-initialized before the user's next
	// request: the 404 of a user's last request may be left unanswered.
	if http := res.ErrorsByKind[mcp.KindHTTP]; res.Reinits == 0 || res.Reinits > http || res.Reinits < http-users {
		t.Errorf("reinits %d, http errors %d: want > 0 and at most one per user short of them", res.Reinits, http)
	}
	if got, want := res.Latency[plan.OpInitialize].Count, users+res.Reinits; got != want {
		t.Errorf("initialize count %d, want users + reinits = %d", got, want)
	}
}

// failingAfterPreflight lets the run's preflight session in (one stateless
// initialize and its notification), then answers every request with
// status and a body echoing the request's Authorization header. It knows
// only the handshake: the plans played against it negotiate.
func failingAfterPreflight(status int) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch n.Add(1) {
		case 1:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`)
		case 2:
			w.WriteHeader(http.StatusAccepted)
		default:
			http.Error(w, "refused: "+r.Header.Get("Authorization"), status)
		}
	})
}

// TestRunInitFailuresBounded: a target that stops letting users in; each
// user gives up after maxInitAttempts and the run ends early. Error
// samples never carry the bearer token, even when the target echoes it.
func TestRunInitFailuresBounded(t *testing.T) {
	checkLeaks(t)
	const token, users = "very-secret-bearer", 3
	ts := httptest.NewServer(failingAfterPreflight(http.StatusUnauthorized))
	defer ts.Close()
	p := mustParse(t, "protocolVersion: negotiate\nscenarios:\n  s: {executor: constant-vus, vus: 3, duration: 10s, flow: [ping]}\n")
	start := time.Now()
	res, err := RunPlan(context.Background(), p, RunOptions{Target: ts.URL + "/mcp", Tokens: []string{token}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s although every user gave up", took)
	}
	if res.AbortedUsers != users || res.InitRetries != users*(maxInitAttempts-1) ||
		res.Requests != users*maxInitAttempts || res.ErrorsByKind[mcp.KindHTTP] != res.Requests {
		t.Errorf("aborted %d retries %d requests %d errors %v", res.AbortedUsers, res.InitRetries, res.Requests, res.ErrorsByKind)
	}
	if res.ErrorRate() != 1 {
		t.Errorf("error rate %v, want 1", res.ErrorRate())
	}
	js, _ := json.Marshal(res)
	if len(res.ErrorSamples) == 0 || bytes.Contains(js, []byte(token)) {
		t.Errorf("samples %q; result JSON must not contain the token", res.ErrorSamples)
	}
}

func TestRunRejectsBadPlan(t *testing.T) {
	p := &plan.Plan{Timeout: plan.Duration(time.Second), Scenarios: []plan.Scenario{{Name: "s", Executor: plan.ExecConstantVUs,
		Duration: plan.Duration(time.Second), Flow: []plan.Step{{Kind: plan.OpPing}}}}}
	res, err := RunPlan(context.Background(), p, RunOptions{Target: "http://127.0.0.1:1/mcp"})
	if !errors.Is(err, plan.ErrInvalidPlan) || res != nil || !strings.Contains(err.Error(), "scenarios.s.vus: must be in [1, 1000000] (got 0)") {
		t.Fatalf("RunPlan with 0 users: res %v err %v", res, err)
	}
}

func TestProgressLine(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	var buf bytes.Buffer
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 3, duration: 2500ms, flow: [think: {uniform: [5ms, 20ms]}, ping]}\n")
	if _, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, Progress: &buf}); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^elapsed (\d+)s/2.5s users 3 req/s [1-9]\d* errors 0 p95 \d+(\.\d)?ms$`)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) == 0 || len(lines) > 3 {
		t.Fatalf("%d progress lines in 2.5s, want about 2: %q", len(lines), lines)
	}
	prev := 0
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %d: %q", i, l)
			continue
		}
		if sec, _ := strconv.Atoi(m[1]); sec <= prev {
			t.Errorf("line %d: elapsed does not advance: %q", i, lines)
		} else {
			prev = sec
		}
	}
}

// TestErrorSamplesRedactAllTokens: samples are scrubbed of every user's
// token, whatever the error message is.
func TestErrorSamplesRedactAllTokens(t *testing.T) {
	m := newMetrics(2, []string{"token-one", "token-two"})
	for range 3 {
		m.sample(errors.New("echo: Bearer token-two and token-one"))
	}
	m.sample(errors.New(strings.Repeat("x", 1000)))
	if len(m.samples) != 2 {
		t.Fatalf("samples %q: want 2 distinct", m.samples)
	}
	if m.samples[0] != "echo: Bearer "+redact.Mask+" and "+redact.Mask || len(m.samples[1]) > maxSampleLn+len("…") {
		t.Errorf("samples %q", m.samples)
	}
}

// TestRunKeepsRetryingAStrugglingTarget: 503s and timeouts are what a
// service with a leaked pool answers; users back off and keep trying for
// the whole scenario instead of retiring, so the load does not vanish.
func TestRunKeepsRetryingAStrugglingTarget(t *testing.T) {
	checkLeaks(t)
	const users = 2
	ts := httptest.NewServer(failingAfterPreflight(http.StatusServiceUnavailable))
	defer ts.Close()
	p := mustParse(t, "protocolVersion: negotiate\nscenarios:\n  s: {executor: constant-vus, vus: 2, duration: 4s, flow: [ping]}\n")
	res, err := RunPlan(context.Background(), p, RunOptions{Target: ts.URL + "/mcp", Tokens: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.AbortedUsers != 0 {
		t.Errorf("%d users retired on 503s; want them to keep retrying", res.AbortedUsers)
	}
	// Backoff with full jitter, at most 100, 200, 400, 800, 1600 ms (half on
	// average) within 4 s: at least 5 tries each.
	if res.Requests < users*maxInitAttempts {
		t.Errorf("only %d initialize attempts in 4 s from %d users", res.Requests, users)
	}
}

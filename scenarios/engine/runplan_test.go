package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/mcp"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

func mustParse(t *testing.T, yaml string) *plan.Plan {
	t.Helper()
	p, err := scenariofile.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runOnSDK plays the plan in yaml against a go-sdk server answering in
// JSON, checking that it leaves no goroutine behind.
func runOnSDK(t *testing.T, yaml string) (*rundir.LoadResult, *mcptest.Server) {
	t.Helper()
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	res, err := RunPlan(context.Background(), mustParse(t, yaml), RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return res, srv
}

// TestRunPlan plays three scenarios side by side against the go-sdk
// server and checks what each did, the thresholds, load.jsonl and that
// every session was closed.
func TestRunPlan(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	pl := mustParse(t, `
headers: {X-Load-Test: leakbench}
seed: 3
scenarios:
  steady:
    executor: constant-vus
    vus: 3
    duration: 1s
    gracefulStop: 2s
    flow:
      - think: {uniform: [10ms, 30ms]}
      - choose:
          - {weight: 2, steps: [tools/list]}
          - {weight: 1, steps: [resources/list]}
          - {weight: 1, steps: [prompts/list]}
          - {weight: 2, steps: [{resources/read: "file:///r{{randInt 0 2}}.txt"}]}
          - {weight: 2, steps: [{prompts/get: {name: greet, arguments: {who: "{{pick ada bob}}"}}}]}
  iter:
    executor: per-vu-iterations
    vus: 2
    iterations: 3
    flow:
      - tools/call: {name: echo, arguments: {text: "u{{user}}-i{{iteration}}"}}
  rate:
    executor: constant-arrival-rate
    rate: 20
    duration: 1s
    preAllocatedVUs: 2
    maxVUs: 4
    startTime: 200ms
    flow: [ping]
thresholds:
  mcp_req_failed: ["rate<0.01"]
  iterations{scenario:iter}: ["count==6"]
  mcp_reqs{method:ping}: ["count>1000"]
  mcp_req_duration{method:tools/call,name:echo}: ["p(95)<5000", "max>0"]
`)
	dir := t.TempDir()
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, Tokens: []string{"tok-a", "tok-b"}, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.EndReason != results.EndCompleted || res.Interrupted {
		t.Errorf("end %q", res.EndReason)
	}
	if res.Failures != 0 || res.ErrorRate() != 0 {
		t.Errorf("failures %d %v %q", res.Failures, res.ErrorsByKind, res.ErrorSamples)
	}
	if it := res.Scenarios["iter"]; it.Iterations != 6 || it.Executor != plan.ExecPerVUIterations {
		t.Errorf("iter: %+v", it)
	}
	if r := res.Scenarios["rate"]; r.Iterations < 15 || r.Iterations > 21 || r.DroppedIterations != 0 {
		t.Errorf("rate: %d iterations (want about 20), %d dropped", r.Iterations, r.DroppedIterations)
	}
	for _, op := range []string{plan.OpListTools, plan.OpListResources, plan.OpListPrompts, plan.OpReadResource, plan.OpGetPrompt, "prompts/get:greet", "tools/call:echo", plan.OpPing, plan.OpInitialize} {
		if res.Latency[op].Count == 0 {
			t.Errorf("no latency for %q", op)
		}
	}
	if got := res.Latency[rundir.OpAll].Count; got != res.Requests {
		t.Errorf("all %d, requests %d", got, res.Requests)
	}
	// Thresholds, in plan order.
	var verdicts []bool
	for _, th := range res.Thresholds {
		verdicts = append(verdicts, th.Pass)
	}
	if !slices.Equal(verdicts, []bool{true, true, false, true, true}) || res.ThresholdsPassed() {
		t.Errorf("thresholds %+v", res.Thresholds)
	}
	if th := res.Thresholds[1]; th.Observed != 6 || th.Samples != 6 {
		t.Errorf("iterations threshold %+v", th)
	}
	// Templates, tokens and headers as the server saw them.
	want := map[string]string{} // echo text -> Authorization
	for user := 3; user <= 4; user++ {
		for it := range 3 {
			want["u"+strconv.Itoa(user)+"-i"+strconv.Itoa(it)] = "Bearer " + []string{"tok-a", "tok-b"}[user%2]
		}
	}
	got := map[string]string{}
	for _, r := range srv.Requests() {
		if r.Header.Get("X-Load-Test") != "leakbench" {
			t.Fatalf("request without the extra header: %+v", r)
		}
		var p struct {
			Name      string
			Arguments struct{ Text string }
		}
		if r.RPCMethod == plan.OpCallTool && json.Unmarshal(r.Params, &p) == nil {
			got[p.Arguments.Text] = r.Authorized
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("echo calls %v, want %v", got, want)
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
	// load.jsonl: one line a second, exactly the documented fields, adding
	// up to the totals.
	lines := readLoad(t, dir)
	if len(lines) < 2 || len(lines) > 4 {
		t.Errorf("%d lines in load.jsonl for a ~1.2s run", len(lines))
	}
	var sum int64
	for _, l := range lines {
		sum += int64(l["requests"].(float64))
	}
	if sum != res.Requests {
		t.Errorf("load.jsonl requests add up to %d, result says %d", sum, res.Requests)
	}
	if th := res.Thresholds[2]; th.Metric != "mcp_reqs{method:ping}" || th.Expression != "count>1000" || th.Pass {
		t.Errorf("ping threshold %+v", th)
	}
	if r := res.Scenarios["rate"]; r.Executor != plan.ExecConstantArrivalRate || r.Latency[plan.OpPing].Count == 0 {
		t.Errorf("rate scenario %+v", r)
	}
	js, _ := json.Marshal(res)
	if bytes.Contains(js, []byte("tok-a")) {
		t.Errorf("result carries a token")
	}
}

var loadFields = []string{"time", "elapsed_seconds", "active_users", "requests", "failures", "aborted",
	"iterations", "dropped_iterations", "req_per_second", "p50_ms", "p95_ms", "p99_ms"}

// loadOptional are the documented fields a line may leave out: the
// generator's figures (generator.go) when not measured that second.
var loadOptional = []string{"engine_cores", "machine_busy", "late_samples", "late_p50_ms", "late_p99_ms", "late_max_ms"}

func readLoad(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.LoadFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		keys := slices.DeleteFunc(slices.Sorted(maps.Keys(m)), func(k string) bool { return slices.Contains(loadOptional, k) })
		if !slices.Equal(keys, slices.Sorted(slices.Values(loadFields))) {
			t.Fatalf("fields %v, want %v (and any of %v)", slices.Sorted(maps.Keys(m)), loadFields, loadOptional)
		}
		if _, err := time.Parse(time.RFC3339Nano, m["time"].(string)); err != nil {
			t.Fatalf("time: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// TestRunPlanDropsIterations: with every user busy, due iterations are
// dropped and counted, not queued.
func TestRunPlanDropsIterations(t *testing.T) {
	res, _ := runOnSDK(t, `
scenarios:
  s:
    executor: constant-arrival-rate
    rate: 40
    duration: 1s
    preAllocatedVUs: 1
    maxVUs: 2
    gracefulStop: 1s
    flow:
      - tools/call: {name: slow, timeout: 300ms}
`)
	s := res.Scenarios["s"]
	if s.DroppedIterations < 25 || s.PeakUsers != 2 || res.DroppedIterations != s.DroppedIterations {
		t.Errorf("dropped %d, peak %d users; want most of 40 dropped with 2 users", s.DroppedIterations, s.PeakUsers)
	}
	if got := s.Iterations + s.DroppedIterations; got < 36 || got > 41 {
		t.Errorf("%d iterations + %d dropped, want about 40", s.Iterations, s.DroppedIterations)
	}
}

// TestRunPlanAbortAfter: the client gives up on a slow call, the server
// sees it go, and it is counted as aborted, not as a failure.
func TestRunPlanAbortAfter(t *testing.T) {
	res, srv := runOnSDK(t, `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 2
    flow:
      - tools/call: {name: slow, abortAfter: 100ms}
      - tools/call: {name: echo, arguments: {text: after}}
`)
	if res.Aborted != 4 || res.ErrorsByKind[mcp.KindAborted] != 4 || res.Failures != 0 || res.ErrorRate() != 0 {
		t.Errorf("aborted %d, errors %v, failures %d", res.Aborted, res.ErrorsByKind, res.Failures)
	}
	if res.Iterations != 4 || res.Latency["tools/call:slow"].Count != 0 || res.Latency["tools/call:echo"].Count != 4 {
		t.Errorf("iterations %d, latency %+v", res.Iterations, res.Latency)
	}
	// The server sees each give-up as its call's end: the connection
	// closed, or the era's cancel notice, whichever reaches it first.
	deadline := time.Now().Add(2 * time.Second)
	for srv.SlowAbandoned.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.SlowAbandoned.Load(); n != 4 {
		t.Errorf("the server saw the client give up %d times, want 4 (one per aborted call)", n)
	}
}

// TestRunPlanInterrupt: ctx ending stops new iterations; requests in
// flight get gracefulStop, then are abandoned; the result says so.
func TestRunPlanInterrupt(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true, SSE: true})
	pl := mustParse(t, `
scenarios:
  s:
    executor: constant-vus
    vus: 4
    duration: 1m
    gracefulStop: 300ms
    flow: [{tools/call: slow}]
`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := RunPlan(ctx, pl, RunOptions{Target: srv.URL})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s", took)
	}
	if err != nil || res.EndReason != results.EndInterrupted || !res.Interrupted {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if res.ErrorsByKind[mcp.KindCanceled] != 4 || res.Failures != 0 {
		t.Errorf("errors %v, failures %d", res.ErrorsByKind, res.Failures)
	}
	deletes := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodDelete {
			deletes++
		}
	}
	if deletes != 5 {
		t.Errorf("%d DELETEs sent, want one per user and one of the preflight session", deletes)
	}

}

// TestRunPlanAbortOnFail: a failing abortOnFail threshold ends the run.
func TestRunPlanAbortOnFail(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	pl := mustParse(t, `
scenarios:
  s:
    executor: constant-vus
    vus: 2
    duration: 30s
    gracefulStop: 1s
    flow: [ping, think: 20ms]
thresholds:
  mcp_reqs: [{threshold: "count<5", abortOnFail: true}]
  mcp_req_failed: ["rate<0.5"]
`)
	var progress bytes.Buffer
	start := time.Now()
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	if res.EndReason != results.EndAbortedByThreshold || res.Thresholds[0].Pass || !res.Thresholds[0].AbortOnFail || !res.Thresholds[1].Pass {
		t.Errorf("end %q, thresholds %+v", res.EndReason, res.Thresholds)
	}
	if !strings.Contains(progress.String(), "threshold mcp_reqs: count<5 failed") {
		t.Errorf("progress %q", progress.String())
	}
}

// TestRunPlanTargets: a target that is not an MCP server, refuses the
// token or is down is reported before any load.
func TestRunPlanTargets(t *testing.T) {
	checkLeaks(t)
	pl := mustParse(t, "timeout: 2s\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n")
	html := httptest.NewServer(mcptest.Reply(404, "text/html", "<h1>Not Found</h1>"))
	defer html.Close()
	page := httptest.NewServer(mcptest.Reply(200, "text/html", "<html>welcome</html>"))
	defer page.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "no: "+r.Header.Get("Authorization"), http.StatusUnauthorized) // echoes the token
	}))
	defer auth.Close()
	down := "http://" + mcptest.RefusedAddr(t) + "/mcp"
	for _, tt := range []struct {
		target, want string
		is           error
	}{
		{html.URL + "/mcp", "is not an MCP server", ErrNotMCP},
		{page.URL + "/mcp", "is not an MCP server", ErrNotMCP},
		{auth.URL + "/mcp", "refused the credentials", nil},
		{down, "cannot reach target", nil},
		{"ftp://127.0.0.1/mcp", "scheme must be http", plan.ErrInvalidPlan},
		{"", "no target", plan.ErrInvalidPlan},
	} {
		res, err := RunPlan(context.Background(), pl, RunOptions{Target: tt.target, Tokens: []string{"sekrit"}})
		if err == nil || res != nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%q: %v, want %q", tt.target, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("error quotes the token: %v", err)
		}
	}
}

// TestRunPlanMetricsEndpoint: /metrics serves live counters during the run.
func TestRunPlanMetricsEndpoint(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	// The http step asks the MCP endpoint for an event stream (GET), which
	// this server does not offer: any answer will do.
	pl := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 1200ms, flow: [ping, think: 10ms, "+
		"{http: {url: /, name: probe, expectStatus: [200, 400, 404, 405, 406]}}]}\n")
	scraped := make(chan string, 1)
	time.AfterFunc(700*time.Millisecond, func() {
		c := &http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://" + addr + "/metrics")
		if err != nil {
			scraped <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		c.CloseIdleConnections()
		scraped <- string(b)
	})
	if _, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, MetricsAddr: addr}); err != nil {
		t.Fatal(err)
	}
	body := <-scraped
	for _, s := range []string{`leakbench_mcp_reqs_total{method="ping",name="",scenario="s"}`, `leakbench_vus{scenario="s"} 2`,
		`leakbench_mcp_req_duration_seconds{method="ping",name="",scenario="s",quantile="0.95"}`,
		`leakbench_http_reqs_total{method="GET",name="probe",scenario="s",status="`,
		`leakbench_http_req_duration_seconds{method="GET",name="probe",scenario="s",status="`} {
		if !strings.Contains(body, s) {
			t.Errorf("/metrics lacks %s:\n%s", s, body)
		}
	}
}

// TestRunPlanRampingVUs: users follow the stages, ramped-down users close
// their sessions.
func TestRunPlanRampingVUs(t *testing.T) {
	res, srv := runOnSDK(t, `
scenarios:
  s:
    executor: ramping-vus
    startVUs: 0
    stages: [{duration: 300ms, target: 4}, {duration: 300ms, target: 4}, {duration: 300ms, target: 1}]
    gracefulRampDown: 100ms
    flow: [ping, think: 20ms]
`)
	if res.PeakUsers != 4 || res.Latency[plan.OpInitialize].Count != 4 || res.Failures != 0 {
		t.Errorf("peak %d, initialize %d, failures %d", res.PeakUsers, res.Latency[plan.OpInitialize].Count, res.Failures)
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}

// TestRunPlanSessionSteps: initialize and endSession steps, and a pinned
// protocol version.
func TestRunPlanSessionSteps(t *testing.T) {
	res, srv := runOnSDK(t, `
protocolVersion: 2025-03-26
scenarios:
  s:
    executor: per-vu-iterations
    vus: 1
    iterations: 3
    flow: [initialize, ping, endSession]
`)
	if res.Latency[plan.OpInitialize].Count != 3 || res.Latency[plan.OpDelete].Count != 3 || res.EndedSessions != 3 || res.Iterations != 3 {
		t.Errorf("initialize %d, DELETE %d, ended %d, iterations %d", res.Latency[plan.OpInitialize].Count, res.Latency[plan.OpDelete].Count, res.EndedSessions, res.Iterations)
	}
	for _, r := range srv.Requests() {
		if r.RPCMethod == plan.OpPing && r.Version != "2025-03-26" {
			t.Errorf("ping with version %q", r.Version)
		}
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}

// TestRunPlanRampingArrivalRate: the rate follows the stages, and an
// abortOnFail threshold is not checked before its delayAbortEval.
func TestRunPlanRampingArrivalRate(t *testing.T) {
	res, _ := runOnSDK(t, `
scenarios:
  s:
    executor: ramping-arrival-rate
    startRate: 0
    stages: [{duration: 1s, target: 20}, {duration: 500ms, target: 20}]
    preAllocatedVUs: 2
    maxVUs: 5
    flow: [ping, {think: {exponential: 5ms}}]
thresholds:
  mcp_reqs: [{threshold: "count<1", abortOnFail: true, delayAbortEval: 1h}]
`)
	// 0 → 20/s over 1 s is 10 iterations, then 20/s for 0.5 s another 10.
	// The schedule is what is judged: an iteration due while all five
	// users were busy (a loaded machine stalls a ping) is dropped, not
	// late, and still counts as scheduled.
	if s := res.Scenarios["s"]; s.Iterations+s.DroppedIterations < 18 || s.Iterations+s.DroppedIterations > 20 || s.DroppedIterations > 2 {
		t.Errorf("%d iterations, %d dropped; want about 20 scheduled", s.Iterations, s.DroppedIterations)
	}
	if res.EndReason != results.EndCompleted || res.Thresholds[0].Pass {
		t.Errorf("end %q, threshold %+v: want completed, and the threshold failed at the end", res.EndReason, res.Thresholds[0])
	}
	if played, err := scenariofile.ReadRecorded(res.Plan); err != nil || played.Scenarios[0].Executor != plan.ExecRampingArrivalRate {
		t.Errorf("result carries no resolved plan it can read back (%v): %s", err, res.Plan)
	}
}

func TestThinkTimes(t *testing.T) {
	v := &vu{tc: plan.Vars{Rand: newTestRand()}}
	d := func(s string) plan.Duration { x, _ := time.ParseDuration(s); return plan.Duration(x) }
	if got := v.thinkTime(plan.Think{Distribution: plan.ThinkFixed, Duration: d("150ms")}); got != 150*time.Millisecond {
		t.Errorf("fixed %s", got)
	}
	var sum time.Duration
	for range 2000 {
		u := v.thinkTime(plan.Think{Distribution: plan.ThinkUniform, Min: d("100ms"), Max: d("200ms")})
		if u < 100*time.Millisecond || u > 200*time.Millisecond {
			t.Fatalf("uniform %s", u)
		}
		e := v.thinkTime(plan.Think{Distribution: plan.ThinkExponential, Duration: d("100ms")})
		if e < 0 || e > time.Second {
			t.Fatalf("exponential %s beyond 10 means", e)
		}
		sum += e
	}
	if mean := sum / 2000; mean < 85*time.Millisecond || mean > 115*time.Millisecond {
		t.Errorf("exponential mean %s, want about 100ms", mean)
	}
}

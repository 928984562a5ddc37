package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// modernFlow uses every 2026-07-28 feature against the hand-written
// server; the %s are the scenario's listen and cache settings.
const modernFlow = `timeout: 3s
scenarios:
  s:
    executor: per-vu-iterations
    vus: 3
    iterations: 3
    listen: %v
    %s
    flow:
      - tools/list
      - prompts/get:
          name: ask_prompt
          inputs: {user_name: {action: accept, content: {name: ada}}}
      - tools/call:
          name: ask
          inputs: {elicitation/create: {action: accept, content: {name: ada}}}
          check: {path: content.0.text, equals: "Hello, ada!"}
      - tools/call: {name: slow_task, task: {timeout: 5s}}
      - think: 50ms
`

// TestFeaturesOnHandRolledServer plays the 2026-07-28 features against a
// server written by hand (neither go-sdk nor the gateway), JSON and SSE
// answers: paged lists cached by ttlMs, input_required answered on
// tools/call and prompts/get (by method and by key), tasks polled to
// completion (with the taskId as Mcp-Name, which the server checks);
// and, listening, streams acknowledged and notified, whose list_changed
// notifications (every 20 ms, several an iteration) make each cached
// list stale again.
func TestFeaturesOnHandRolledServer(t *testing.T) {
	type mode struct {
		sse, listen bool
		cache       string
	}
	modes := []mode{{false, false, ""}, {false, false, "cache: ignore"}, {true, false, ""}, {true, false, "cache: ignore"}, {false, true, ""}, {true, true, ""}}
	for _, m := range modes {
		sse, listen, cache := m.sse, m.listen, m.cache
		t.Run(fmt.Sprintf("sse=%v/listen=%v/%s", sse, listen, cache), func(t *testing.T) {
			checkLeaks(t)
			srv, url := serveTestMCP(t, mcptest.Options{DualEra: true, Stateless: true, SSE: sse, TTL: time.Minute, PageSize: 1,
				TaskDuration: 150 * time.Millisecond, TaskPollInterval: 30 * time.Millisecond, NotifyEvery: 20 * time.Millisecond})
			defer srv.Close()
			pl := mustParse(t, fmt.Sprintf(modernFlow, listen, cache))
			res, err := RunPlan(context.Background(), pl, RunOptions{Target: url})
			if err != nil {
				t.Fatal(err)
			}
			// Every stream, connection and goroutine of the run has ended
			// when RunPlan returns; the server hears of it a moment later.
			assertRunEnded(t, url)
			serverSees(t, "listen streams", srv.ListensOpen)
			serverSees(t, "connections", srv.Open.Load)
			if res.Failures != 0 || res.Iterations != 9 {
				t.Fatalf("failures %d (%v), iterations %d; samples %q", res.Failures, res.ErrorsByKind, res.Iterations, res.ErrorSamples)
			}
			if res.Protocol["2026-07-28"] != 3 {
				t.Errorf("protocol %v, want 3 users on 2026-07-28", res.Protocol)
			}
			f := res.Features
			// A listing is measured once, its pages (3 tools, one a page)
			// are what the server counts.
			listings, pages := res.Latency[plan.OpListTools].Count, srv.Count("tools/list")
			switch {
			case cache == "" && !listen && (f.CacheHits[plan.OpListTools] != 6 || listings != 3 || pages != 9):
				t.Errorf("%d listings measured, %d pages sent, %d cache hits; want 3 (one a user), 9 and 6", listings, pages, f.CacheHits[plan.OpListTools])
			case (cache != "" || listen) && (f.CacheHits != nil || listings != 9 || pages != 27):
				t.Errorf("measured %d listings of %d pages (hits %v), want 9 of 27: nothing cached (ignore), or made stale by list_changed", listings, pages, f.CacheHits)
			}
			if f.InputRoundTrips != 18 || srv.InputCompleted() != 18 {
				t.Errorf("%d input round trips, the server completed %d; want 18", f.InputRoundTrips, srv.InputCompleted())
			}
			if f.Tasks == nil || f.Tasks.Created != 9 || f.Tasks.Completed != 9 || srv.TasksCreated() != 9 {
				t.Errorf("tasks %+v (server created %d), want 9 created and completed", f.Tasks, srv.TasksCreated())
			}
			if polls := res.Latency[plan.OpTasksGet].Count; polls < 9 || polls != srv.TaskPolls() {
				t.Errorf("%d tasks/get measured, the server answered %d", polls, srv.TaskPolls())
			}
			if call := res.Latency["tools/call:slow_task"]; call.P50Ms < 150 {
				t.Errorf("a task's tools/call took %.0f ms at p50, less than the task's 150 ms: not end to end", call.P50Ms)
			}
			if listen && (f.Listen == nil || f.Listen.Streams != 3 || srv.Listens() != 3 || f.Listen.Events["notifications/tools/list_changed"] < 3 ||
				res.Latency[plan.OpListen].Count != 3) {
				t.Errorf("listen %+v (server opened %d, %d measured), want 3 streams opened, measured and notified", f.Listen, srv.Listens(), res.Latency[plan.OpListen].Count)
			}
			if !listen && (f.Listen != nil || srv.Listens() != 0) {
				t.Errorf("a scenario without listen: opened streams: %+v", f.Listen)
			}
		})
	}
}

// TestCancelledTaskOnHandRolledServer: cancelAfter sends tasks/cancel,
// which the server acknowledges, and the step counts as aborted, not as
// a failure.
func TestCancelledTaskOnHandRolledServer(t *testing.T) {
	checkLeaks(t)
	srv, url := serveTestMCP(t, mcptest.Options{DualEra: true, Stateless: true, TaskDuration: 10 * time.Second, TaskPollInterval: 20 * time.Millisecond})
	pl := mustParse(t, `timeout: 3s
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 1
    flow:
      - tools/call: {name: slow_task, task: {cancelAfter: 200ms}}
`)
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: url})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 || res.Aborted != 2 {
		t.Errorf("failures %d, aborted %d; want 0 and 2: %q", res.Failures, res.Aborted, res.ErrorSamples)
	}
	if f := res.Features; f == nil || f.Tasks == nil || f.Tasks.GivenUp != 2 || srv.TaskCancels() != 2 || res.Latency[plan.OpTasksCancel].Count != 2 {
		t.Errorf("features %+v, server cancels %d, tasks/cancel measured %d; want 2 given up and cancelled", res.Features, srv.TaskCancels(), res.Latency[plan.OpTasksCancel].Count)
	}
}

// TestListenResumesOnHandRolledServer: in the 2025 era a stateful
// server's GET stream that drops after a few events is resumed with
// Last-Event-ID, which the server recognizes as its own.
func TestListenResumesOnHandRolledServer(t *testing.T) {
	checkLeaks(t)
	srv, url := serveTestMCP(t, mcptest.Options{NotifyEvery: 10 * time.Millisecond, DropStreamAfter: 3})
	pl := mustParse(t, `timeout: 3s
protocolVersion: 2025-06-18
scenarios:
  s:
    executor: constant-vus
    vus: 2
    duration: 600ms
    listen: true
    flow: [{tools/call: {name: echo, arguments: {text: hi}}}, think: 50ms]
`)
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: url})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 {
		t.Fatalf("failures %d: %q", res.Failures, res.ErrorSamples)
	}
	l := res.Features.Listen
	if l == nil || l.Resumed < 2 || srv.Resumes() < l.Resumed || l.Events["notifications/tools/list_changed"] < 6 {
		t.Errorf("listen %+v, server saw %d resumes; want each user's stream resumed", l, srv.Resumes())
	}
	if srv.GETStreamsOpen() != 0 {
		t.Errorf("%d GET streams open after the run", srv.GETStreamsOpen())
	}
}

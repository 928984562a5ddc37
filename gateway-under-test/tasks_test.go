package gateway_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestTasksProtocol drives the Tasks extension (SEP-2663) on the fixed
// gateway with raw 2026-07-28 requests: server/discover advertises it and
// the 2025 handshake does not; wait_for_run becomes a task only for a
// request that declares the extension, and otherwise waits as it always
// did; tasks/get polls the task to the result wait_for_run would have
// returned; invalid calls stay synchronous tool errors; unknown, foreign
// and expired task ids, a missing Mcp-Name and tasks/result are JSON-RPC
// errors; /metrics counts it all.
func TestTasksProtocol(t *testing.T) {
	// Serial (no t.Parallel): asserts the task completes before its 3 s TTL and expires after it; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	const ttl = 3 * time.Second
	const poll = 100 * time.Millisecond
	gw := startGateway(t, env, gateway.Config{RunDelay: time.Second, PollInterval: poll, TaskTTL: ttl})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tc := &rawClient{url: gw.URL(), token: env.Tokens[0], tasks: true}
	plain := &rawClient{url: gw.URL(), token: env.Tokens[0]}
	other := &rawClient{url: gw.URL(), token: env.Tokens[1], tasks: true}

	var disc struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(plain.mustCall(t, ctx, "server/discover", "", nil), &disc); err != nil {
		t.Fatal(err)
	}
	if got := string(disc.Capabilities.Extensions["io.modelcontextprotocol/tasks"]); got != "{}" {
		t.Errorf("server/discover: extensions[io.modelcontextprotocol/tasks] = %q, want {}", got)
	}
	if _, ok := connect(t, ctx, gw.URL(), env.Tokens[2]).InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/tasks"]; ok {
		t.Errorf("the 2025 handshake advertises the Tasks extension, which that era does not define")
	}

	// Without the extension: the synchronous wait.
	start := time.Now()
	raw := plain.mustCall(t, ctx, "tools/call", "wait_for_run", map[string]any{"name": "wait_for_run",
		"arguments": map[string]any{"run_id": plain.startRun(t, ctx), "max_wait_seconds": 10}})
	if task := decodeTask(t, raw); task.ResultType == "task" || task.TaskID != "" {
		t.Fatalf("a client that did not declare the extension got a task: %s", raw)
	}
	var sync struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &sync); err != nil || sync.StructuredContent["status"] != "done" {
		t.Fatalf("synchronous wait_for_run: %s", raw)
	}
	t.Logf("synchronous wait_for_run: %s in %s", raw, time.Since(start).Round(time.Millisecond))

	// With it: a task.
	run := tc.startRun(t, ctx)
	a, err := tc.waitForRun(ctx, run, 10)
	if err != nil || a.result == nil {
		t.Fatalf("wait_for_run as a task: %v %s", err, a)
	}
	task := decodeTask(t, a.result)
	if task.ResultType != "task" || task.Status != "working" || len(task.TaskID) < 20 {
		t.Fatalf("CreateTaskResult: %s", a.result)
	}
	if task.TTLMs == nil || *task.TTLMs != ttl.Milliseconds() || task.PollIntervalMs == nil || *task.PollIntervalMs != poll.Milliseconds() {
		t.Errorf("CreateTaskResult ttlMs/pollIntervalMs: %s, want %d/%d", a.result, ttl.Milliseconds(), poll.Milliseconds())
	}
	created := parseTaskTime(t, "createdAt", task.CreatedAt)
	parseTaskTime(t, "lastUpdatedAt", task.LastUpdatedAt)
	id := task.TaskID
	t.Logf("CreateTaskResult: %s", a.result)

	checkRPCError := func(what string, a rpcAnswer, err error, code int64) {
		t.Helper()
		if err != nil || a.err == nil || a.err.Code != code {
			t.Errorf("%s: %v %s, want JSON-RPC error %d", what, err, a, code)
		}
	}
	a, err = other.task(ctx, "tasks/get", id)
	checkRPCError("tasks/get with another user's token", a, err, -32602)
	a, err = tc.call(ctx, "tasks/get", "", map[string]any{"taskId": id})
	checkRPCError("tasks/get without Mcp-Name", a, err, -32020)
	a, err = plain.task(ctx, "tasks/get", id)
	checkRPCError("tasks/get from a request that does not declare the extension", a, err, -32021)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		a, err = tc.task(ctx, m, "no-such-task")
		checkRPCError(m+" of an unknown task", a, err, -32602)
	}
	a, err = tc.task(ctx, "tasks/result", id)
	checkRPCError("tasks/result (removed by SEP-2663)", a, err, -32601)

	polls := 0
	for !terminal(task.Status) && time.Since(created) < ttl {
		time.Sleep(poll)
		task = decodeTask(t, tc.mustCall(t, ctx, "tasks/get", id, map[string]any{"taskId": id}))
		polls++
	}
	if task.Status != "completed" || task.ResultType != "complete" || task.Result == nil || task.Result.IsError {
		t.Fatalf("task after %d polls: %+v", polls, task)
	}
	if sc := task.Result.StructuredContent; sc["status"] != "done" || sc["run_id"] != float64(run) || sc["polls"].(float64) < 2 {
		t.Errorf("completed task's result: %+v, want run %d done after polls", sc, run)
	}
	t.Logf("completed after %d tasks/get: %+v", polls, task.Result.StructuredContent)
	if a, err := tc.task(ctx, "tasks/update", id); err != nil || string(a.result) == "" || decodeTask(t, a.result).ResultType != "complete" {
		t.Errorf("tasks/update: %v %s, want an ack", err, a)
	}
	if a, err := tc.task(ctx, "tasks/cancel", id); err != nil || a.result == nil {
		t.Errorf("tasks/cancel of a completed task: %v %s, want an ack", err, a)
	}
	if got := decodeTask(t, tc.mustCall(t, ctx, "tasks/get", id, map[string]any{"taskId": id})).Status; got != "completed" {
		t.Errorf("a completed task cancelled: status %q, want it completed still", got)
	}

	// Calls the tool refuses stay synchronous tool errors, not tasks.
	for _, args := range []map[string]any{{"run_id": run, "max_wait_seconds": 99}, {"run_id": 987654321}} {
		raw := tc.mustCall(t, ctx, "tools/call", "wait_for_run", map[string]any{"name": "wait_for_run", "arguments": args})
		if task := decodeTask(t, raw); task.ResultType == "task" || !json.Valid(raw) {
			t.Errorf("wait_for_run(%v) made a task: %s", args, raw)
		}
		var res struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(raw, &res) != nil || !res.IsError {
			t.Errorf("wait_for_run(%v): %s, want a tool error", args, raw)
		}
	}

	time.Sleep(time.Until(created.Add(ttl + 300*time.Millisecond)))
	a, err = tc.task(ctx, "tasks/get", id)
	checkRPCError("tasks/get past the TTL", a, err, -32602)

	m := scrape(t, gw.MetricsURL())
	for series, want := range map[string]float64{
		"mcp_gateway_tasks_created_total":                                      1,
		`mcp_gateway_tasks_ended_total{status="completed"}`:                    1,
		"mcp_gateway_tasks_open":                                               0,
		"mcp_gateway_db_pool_task_connections":                                 0,
		`mcp_gateway_tool_calls_total{result="task",tool="wait_for_run"}`:      1,
		`mcp_gateway_mcp_requests_total{method="tasks/update",result="ok"}`:    1,
		`mcp_gateway_mcp_requests_total{method="tasks/cancel",result="ok"}`:    1,
		"mcp_gateway_db_pool_acquired_connections":                             0,
		`mcp_gateway_mcp_requests_total{method="tasks/get",result="error"}`:    5, // foreign, no Mcp-Name, undeclared, unknown, expired
		`mcp_gateway_mcp_requests_total{method="tasks/cancel",result="error"}`: 1,
	} {
		if got := m[series]; got != want {
			t.Errorf("%s = %g, want %g", series, got, want)
		}
	}
	if got := m[`mcp_gateway_mcp_requests_total{method="tasks/get",result="ok"}`]; got < 2 {
		t.Errorf("tasks/get answered ok = %g, want at least 2", got)
	}
}

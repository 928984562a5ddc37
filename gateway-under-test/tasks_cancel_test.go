package gateway_test

import (
	"context"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestTaskCancelAndAbandon: one client cancels its task at once, another
// creates a task and never polls it. Fixed holds nothing for either;
// held-while-polling holds both connections — the cancelled task's too —
// until the TTL discards the tasks. In both, a client that does not
// declare the extension waits synchronously and holds nothing after.
func TestTaskCancelAndAbandon(t *testing.T) {
	// Serial (no t.Parallel): asserts connections held until shortly before the task TTL and released after it; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	const ttl = 3 * time.Second
	for _, variant := range []string{"fixed", "held-while-polling"} {
		t.Run(variant, func(t *testing.T) {
			leaky := variant == "held-while-polling"
			gw := startGateway(t, env, gateway.Config{Variant: variant, PoolSize: 4, PoolTimeout: time.Second,
				RunDelay: 30 * time.Second, PollInterval: 100 * time.Millisecond, TaskTTL: ttl})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			metric := func(series string) float64 { return scrape(t, gw.MetricsURL())[series] }

			plain := &rawClient{url: gw.URL(), token: env.Tokens[2]}
			a, err := plain.waitForRun(ctx, plain.startRun(t, ctx), 0.3)
			if err != nil || a.result == nil || decodeTask(t, a.result).ResultType == "task" {
				t.Fatalf("wait_for_run without the extension: %v %s, want its synchronous result", err, a)
			}
			if got := metric("mcp_gateway_db_pool_acquired_connections"); got != 0 {
				t.Errorf("after a synchronous wait: %g connections acquired, want 0", got)
			}

			canceller := &rawClient{url: gw.URL(), token: env.Tokens[0], tasks: true}
			abandoner := &rawClient{url: gw.URL(), token: env.Tokens[1], tasks: true}
			var ids []string
			var created time.Time
			for _, c := range []*rawClient{canceller, abandoner} {
				a, err := c.waitForRun(ctx, c.startRun(t, ctx), 30)
				if err != nil || a.result == nil || decodeTask(t, a.result).ResultType != "task" {
					t.Fatalf("wait_for_run as a task: %v %s", err, a)
				}
				ids = append(ids, decodeTask(t, a.result).TaskID)
				created = time.Now()
			}
			a, err = canceller.task(ctx, "tasks/cancel", ids[0])
			if err != nil || a.result == nil || decodeTask(t, a.result).ResultType != "complete" {
				t.Fatalf("tasks/cancel: %v %s", err, a)
			}
			if got := decodeTask(t, canceller.mustCall(t, ctx, "tasks/get", ids[0], map[string]any{"taskId": ids[0]})).Status; got != "cancelled" {
				t.Errorf("status after tasks/cancel = %q, want cancelled", got)
			}
			want := 0.0
			if leaky {
				want = 2 // the cancelled task's and the abandoned one's
			}
			time.Sleep(300 * time.Millisecond)
			m := scrape(t, gw.MetricsURL())
			for _, series := range []string{"mcp_gateway_db_pool_acquired_connections", "mcp_gateway_db_pool_task_connections"} {
				if got := m[series]; got != want {
					t.Errorf("after the cancel: %s = %g, want %g", series, got, want)
				}
			}
			if got := m[`mcp_gateway_tasks_ended_total{status="cancelled"}`]; got != 1 {
				t.Errorf("cancelled tasks = %g, want 1", got)
			}
			if got := m["mcp_gateway_tasks_open"]; got != 1 {
				t.Errorf("open tasks = %g, want 1 (the abandoned one)", got)
			}
			if leaky {
				time.Sleep(time.Until(created.Add(ttl - 700*time.Millisecond)))
				if got := metric("mcp_gateway_db_pool_task_connections"); got != 2 {
					t.Errorf("shortly before the TTL: %g task-held connections, want 2 (held until the TTL)", got)
				}
			}
			var released time.Time
			if !waitFor(ttl+2*time.Second, func() bool {
				released = time.Now()
				return metric("mcp_gateway_db_pool_acquired_connections") == 0 && metric("mcp_gateway_db_pool_task_connections") == 0
			}) {
				t.Fatalf("connections still held %s after the tasks' creation", time.Since(created).Round(time.Millisecond))
			}
			t.Logf("%s: connections released %s after the tasks' creation (TTL %s)", variant, released.Sub(created).Round(10*time.Millisecond), ttl)
			if leaky && released.Sub(created) < ttl-200*time.Millisecond {
				t.Errorf("held-while-polling released %s after creation, before the %s TTL", released.Sub(created), ttl)
			}
			time.Sleep(time.Until(created.Add(ttl + 300*time.Millisecond)))
			for i, c := range []*rawClient{canceller, abandoner} {
				if a, err := c.task(ctx, "tasks/get", ids[i]); err != nil || a.err == nil || a.err.Code != -32602 {
					t.Errorf("tasks/get past the TTL: %v %s, want unknown task", err, a)
				}
			}
			if got := metric(`mcp_gateway_tasks_ended_total{status="expired"}`); got != 1 {
				t.Errorf("expired tasks = %g, want 1 (the abandoned one)", got)
			}
		})
	}
}

package gateway_test

import (
	"context"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestWaitForCapturedRun plays, with leakbench's engine on a real local
// stack, a flow that starts a run, captures its run_id, starts a second
// one and asks about the first by the captured id: it is done, while the
// caller's latest run (the fallback without run_id) is still running.
func TestWaitForCapturedRun(t *testing.T) {
	// Serial (no t.Parallel): a run of 700 ms must still be running a step after it started; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	gw := startGateway(t, env, gateway.Config{RunDelay: 700 * time.Millisecond, PollInterval: 100 * time.Millisecond})
	p, err := scenariofile.Parse([]byte(`
timeout: 10s
scenarios:
  runs:
    executor: per-vu-iterations
    vus: 3
    iterations: 2
    flow:
      - tools/call: { name: start_run, arguments: { name: first }, capture: { first: structuredContent.run_id } }
      - think: 1500ms
      - tools/call: { name: start_run, arguments: { name: second } }
      - tools/call:
          name: wait_for_run
          arguments: { run_id: "{{vars.first}}", max_wait_seconds: 0 }
          check: ["structuredContent.status == done", "isError == false"]
      - tools/call:
          name: wait_for_run
          arguments: { max_wait_seconds: 0 }
          check: [{ path: structuredContent.status, equals: running, name: latest is the second }]
thresholds:
  checks: ["rate==1"]
  mcp_req_failed: ["rate==0"]
`), "captured.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := engine.RunPlan(ctx, p, engine.RunOptions{Target: gw.URL(), Tokens: env.Tokens[:3]})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ThresholdsPassed() || len(res.Checks) != 3 {
		t.Fatalf("thresholds %+v; checks %+v; errors %q", res.Thresholds, res.Checks, res.ErrorSamples)
	}
	for _, c := range res.Checks {
		if c.Passes != 6 {
			t.Errorf("check %q held %d times, want 6 (3 users x 2 iterations)", c.Check, c.Passes)
		}
	}
}

package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/stack"
)

const (
	upstreamTimeout = 2 * time.Second // idle_in_transaction_session_timeout of these tests
	upstreamClients = 4
	upstreamFast    = 1000 // ms: slower than healthy, faster than the timeout
	upstreamSlow    = 3000 // ms: slower than the timeout
)

// upstreamCalls has n clients call call_upstream at once, the upstream
// taking latencyMS, and returns how many calls failed and their errors.
func upstreamCalls(t *testing.T, env *fixtures.Env, latencyMS int) (failed int, errs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range upstreamClients {
		cs := connect(t, ctx, env.GatewayURL, env.Tokens[i])
		wg.Go(func() {
			res, err := callTool(ctx, cs, "call_upstream", map[string]any{"payload": "hello", "upstream_latency_ms": latencyMS})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failed++
				errs = append(errs, err.Error())
			case res.IsError:
				failed++
				errs = append(errs, resultText(res))
			}
		})
	}
	wg.Wait()
	return failed, errs
}

// upstreamLoad runs both halves of the held-across-upstream load: calls
// whose upstream answers within the idle-in-transaction timeout, then calls
// whose upstream is slower than it.
func upstreamLoad(t *testing.T, variant string) (env *fixtures.Env, fast, slow []episode, slowFailed int, slowErrs []string) {
	env = startStack(t, stack.Config{Variant: variant, IdleInTxTimeout: upstreamTimeout})
	s := startSampler(t, env, 100*time.Millisecond)
	if failed, errs := upstreamCalls(t, env, upstreamFast); failed != 0 {
		t.Errorf("%d calls with a %d ms upstream failed: %v", failed, upstreamFast, errs)
	}
	time.Sleep(300 * time.Millisecond) // let the sampler see the episodes end
	fast = s.Episodes(minSignatureSpan)
	mark := time.Now()
	slowFailed, slowErrs = upstreamCalls(t, env, upstreamSlow)
	time.Sleep(300 * time.Millisecond)
	for _, e := range s.Episodes(minSignatureSpan) {
		if e.start.After(mark) {
			slow = append(slow, e)
		}
	}
	t.Logf("%s: upstream %d ms: %d episodes, holds %s; upstream %d ms: %d episodes, holds %s, %d calls failed",
		variant, upstreamFast, len(fast), holds(fast), upstreamSlow, len(slow), holds(slow), slowFailed)
	return env, fast, slow, slowFailed, slowErrs
}

// TestHeldAcrossUpstreamLeaks proves the held-across-upstream leak: the
// transaction that records the call sits idle in transaction for the
// upstream's latency (1 s), and when the upstream is slower than the
// timeout (3 s against 2 s) PostgreSQL kills it at the timeout and the
// call fails on the connection's next use.
func TestHeldAcrossUpstreamLeaks(t *testing.T) {
	// Serial (no t.Parallel): asserts hold times within 1 s of the timeout; it must not share the CPU with other tests.
	skipShort(t)
	env, fast, slow, failed, errs := upstreamLoad(t, "held-across-upstream")

	if len(fast) != upstreamClients {
		t.Errorf("%d episodes idle in transaction with a %d ms upstream, want %d", len(fast), upstreamFast, upstreamClients)
	}
	for _, e := range fast {
		if !strings.HasPrefix(e.query, "INSERT INTO upstream_calls") {
			t.Errorf("idle-in-transaction session's last query is not the bookkeeping INSERT: %q", e.query)
		}
		if h := e.hold(); h < upstreamFast*time.Millisecond-100*time.Millisecond || h > upstreamFast*time.Millisecond+time.Second {
			t.Errorf("session held %s for a %d ms upstream", h, upstreamFast)
		}
		if e.killed {
			t.Errorf("session (pid %d) killed although the upstream beat the timeout", e.pid)
		}
	}

	if len(slow) != upstreamClients {
		t.Errorf("%d episodes idle in transaction with a %d ms upstream, want %d", len(slow), upstreamSlow, upstreamClients)
	}
	for _, e := range slow {
		if !e.killed {
			t.Errorf("session (pid %d) not killed although the upstream was slower than the timeout", e.pid)
		}
		if h := e.hold(); h < upstreamTimeout-100*time.Millisecond || h > upstreamTimeout+time.Second {
			t.Errorf("session held %s, want the %s timeout within 1 s", h, upstreamTimeout)
		}
	}
	if failed != upstreamClients {
		t.Errorf("%d of %d calls with a slow upstream failed, want all (the connection was killed under them)", failed, upstreamClients)
	}
	if len(errs) > 0 {
		t.Logf("a call whose session was killed: %s", errs[0])
	}
	for _, e := range errs {
		if !strings.Contains(e, "record the upstream's answer") {
			t.Errorf("call failed, but not on the next use of its connection: %s", e)
		}
	}
	if n := idleTimeoutKills(t, env); n != upstreamClients {
		t.Errorf("postgres log shows %d idle-in-transaction timeouts (25P03), want %d", n, upstreamClients)
	}
	m := scrape(t, env.GatewayMetricsURL)
	if got := m[`mcp_gateway_tool_calls_total{result="tool_error",tool="call_upstream"}`]; got != upstreamClients {
		t.Errorf("call_upstream tool errors on /metrics = %g, want %d", got, upstreamClients)
	}
	if got := m["mcp_gateway_db_pool_acquired_connections"]; got != 0 {
		t.Errorf("acquired connections = %g after the calls, want 0 (the killed ones are destroyed)", got)
	}
}

// TestFixedReleasesBeforeUpstream runs the same calls against the fixed
// variant: no transaction is open while the upstream works, so nothing is
// idle in transaction, nothing is killed and every call succeeds.
func TestFixedReleasesBeforeUpstream(t *testing.T) {
	// Serial (no t.Parallel): asserts no session idle in transaction for 500 ms; it must not share the CPU with other tests.
	skipShort(t)
	env, fast, slow, failed, errs := upstreamLoad(t, "fixed")
	if len(fast)+len(slow) != 0 {
		t.Errorf("fixed variant held sessions idle in transaction: %+v %+v", fast, slow)
	}
	if failed != 0 {
		t.Errorf("%d calls with a slow upstream failed: %v", failed, errs)
	}
	if n := idleTimeoutKills(t, env); n != 0 {
		t.Errorf("postgres log shows %d idle-in-transaction timeouts, want 0", n)
	}
	m := scrape(t, env.GatewayMetricsURL)
	if got := m[`mcp_gateway_tool_calls_total{result="ok",tool="call_upstream"}`]; got != 2*upstreamClients {
		t.Errorf("successful call_upstream calls on /metrics = %g, want %d", got, 2*upstreamClients)
	}
}

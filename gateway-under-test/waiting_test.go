package gateway_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitingResult is what the waiters saw and /metrics said.
type waitingResult struct {
	done, toolErrors, callErrors int
	poolAtMax, poolSamples       int // /metrics samples with acquired = max
	metrics                      map[string]float64
	errs                         []string
}

const (
	waitPool    = 4
	waitClients = 6
	// waitRunDelay must outlast the setup between the first start_run and
	// the last waiter's first poll, or the runs are done before the
	// waiters hold anything: 3 s leaves room on a loaded 2-core machine.
	waitRunDelay = 3 * time.Second
)

// waitingLoad is the load of both held-while-waiting tests: more clients
// than the gateway has pooled connections (6 > 4) each start a run and wait
// for it. While they wait, a watcher samples the gateway's pool on /metrics.
func waitingLoad(t *testing.T, variant string) (*fixtures.Env, *sampler, waitingResult) {
	env := startStack(t, stack.Config{Variant: variant, GatewayPoolSize: waitPool, PgBouncerPoolSize: 10,
		RunDelay: waitRunDelay, GatewayPoolTimeout: 2 * time.Second, IdleInTxTimeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Everything slow is done before the first run starts: the sessions,
	// the sampler. The runs then start back to back, the waits right after.
	sessions := make([]*mcp.ClientSession, waitClients)
	for i := range sessions {
		sessions[i] = connect(t, ctx, env.GatewayURL, env.Tokens[i])
	}
	s := startSampler(t, env, 100*time.Millisecond)
	firstRun := time.Now()
	css := make([]func() (string, bool, error), waitClients)
	for i, cs := range sessions {
		res, err := callTool(ctx, cs, "start_run", map[string]any{"name": "wait test"})
		if err != nil || res.IsError {
			t.Fatalf("start_run: %v %s", err, resultText(res))
		}
		id := int64(res.StructuredContent.(map[string]any)["run_id"].(float64))
		css[i] = func() (string, bool, error) {
			res, err := callTool(ctx, cs, "wait_for_run", map[string]any{"run_id": id, "max_wait_seconds": 10})
			if err != nil {
				return "", false, err
			}
			if res.IsError {
				return resultText(res), true, nil
			}
			return res.StructuredContent.(map[string]any)["status"].(string), false, nil
		}
	}

	var r waitingResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	var stop atomic.Bool
	watch := make(chan struct{})
	go func() {
		defer close(watch)
		for !stop.Load() {
			m := scrape(t, env.GatewayMetricsURL)
			mu.Lock()
			r.poolSamples++
			if m["mcp_gateway_db_pool_acquired_connections"] == m["mcp_gateway_db_pool_max_connections"] {
				r.poolAtMax++
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Logf("runs started in %s of the %s run delay", time.Since(firstRun).Round(time.Millisecond), waitRunDelay)
	for i, wait := range css {
		// Staggered a little, as real clients are: simultaneous polls
		// would make even the fixed variant fill the pool for an instant.
		time.Sleep(time.Duration(i) * 30 * time.Millisecond)
		wg.Go(func() {
			status, toolErr, err := wait()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				r.callErrors++
				r.errs = append(r.errs, err.Error())
			case toolErr:
				r.toolErrors++
				r.errs = append(r.errs, status)
			case status == "done":
				r.done++
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	<-watch
	r.metrics = scrape(t, env.GatewayMetricsURL)
	t.Logf("%s: %d done, %d tool errors, %d failed calls; pool at max in %d of %d samples; acquire waits %g, timeouts %g; max idle %d, max idle in transaction %d",
		variant, r.done, r.toolErrors, r.callErrors, r.poolAtMax, r.poolSamples,
		r.metrics["mcp_gateway_db_pool_acquire_waits_total"], r.metrics["mcp_gateway_db_pool_acquire_timeouts_total"],
		s.MaxState("idle"), s.MaxState("idle in transaction"))
	return env, s, r
}

// TestHeldWhileWaitingExhaustsPool proves the held-while-waiting leak: each
// waiting request keeps its authentication connection, so six waiters
// exhaust a pool of four — the gateway's pool is fully acquired while
// PostgreSQL sees no session idle in transaction (the held connections are
// plain idle, and through PgBouncer do not even hold a server), and the
// waiters' own polls, and the requests behind them, time out.
func TestHeldWhileWaitingExhaustsPool(t *testing.T) {
	// Serial (no t.Parallel): asserts pool exhaustion within timed windows; it must not share the CPU with other tests.
	skipShort(t)
	_, s, r := waitingLoad(t, "held-while-waiting")
	if r.poolAtMax*2 < r.poolSamples {
		t.Errorf("pool fully acquired in %d of %d /metrics samples, want most", r.poolAtMax, r.poolSamples)
	}
	if got := r.metrics["mcp_gateway_db_pool_acquire_timeouts_total"]; got < waitClients-waitPool {
		t.Errorf("acquire timeouts = %g, want at least %d", got, waitClients-waitPool)
	}
	if got := r.metrics["mcp_gateway_db_pool_acquire_waits_total"]; got < waitClients-waitPool {
		t.Errorf("acquire waits = %g, want at least %d", got, waitClients-waitPool)
	}
	// The first waiters to give up free their connections, so some of the
	// last may still finish; at least those beyond the pool size fail.
	if failed := r.toolErrors + r.callErrors; failed < waitClients-waitPool {
		t.Errorf("%d waits done, %d failed, want at least %d to fail with the pool exhausted", r.done, failed, waitClients-waitPool)
	}
	// Polls fail inside the tool; requests that cannot authenticate get 503.
	assertHeldIdle(t, "held-while-waiting", r.errs, s, r.metrics)
}

// assertHeldIdle checks what the two held-while-* variants share beside
// their pool pinned at its max: every failure is the exhausted pool (in
// the tool, or a 503 for a request that cannot authenticate), no session
// sat idle in a transaction (they are held idle), and no connection was
// lost for good (they are held, and given back).
func assertHeldIdle(t *testing.T, variant string, errs []string, s *sampler, metrics map[string]float64) {
	t.Helper()
	for _, e := range errs {
		if !strings.Contains(e, "pool exhausted") && !strings.Contains(e, "Service Unavailable") && !strings.Contains(e, "HTTP 503") {
			t.Errorf("%s: a request failed for another reason than the exhausted pool: %s", variant, e)
		}
	}
	if long := s.Episodes(minSignatureSpan); len(long) != 0 {
		t.Errorf("%s left sessions idle in transaction (it holds them idle, not in a transaction): %+v", variant, long)
	}
	if got := metrics["mcp_gateway_db_pool_unclosed_sessions"]; got != 0 {
		t.Errorf("%s: unclosed sessions = %g; the connections are held, not leaked for good", variant, got)
	}
}

// TestFixedWaitsWithoutHolding runs the same waiters against the fixed
// variant: no connection is held while a run is waited for, so all six
// waits finish, the pool never fills and nothing times out.
func TestFixedWaitsWithoutHolding(t *testing.T) {
	// Serial (no t.Parallel): asserts no session idle in transaction for 500 ms; it must not share the CPU with other tests.
	skipShort(t)
	_, s, r := waitingLoad(t, "fixed")
	if r.done != waitClients {
		t.Errorf("%d of %d waits done; errors: %v", r.done, waitClients, r.errs)
	}
	// A poll takes milliseconds: a sample may catch the pool full at an
	// instant when several coincide, but not for any length of time.
	if r.poolAtMax*10 > r.poolSamples {
		t.Errorf("pool fully acquired in %d of %d /metrics samples, want at most 1 in 10", r.poolAtMax, r.poolSamples)
	}
	if got := r.metrics["mcp_gateway_db_pool_acquire_timeouts_total"]; got != 0 {
		t.Errorf("acquire timeouts = %g, want 0", got)
	}
	if long := s.Episodes(minSignatureSpan); len(long) != 0 {
		t.Errorf("fixed variant held sessions idle in transaction: %+v", long)
	}
}

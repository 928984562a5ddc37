package gateway_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// abortReports has each of n clients (go-sdk's, speaking version: see
// connectVersion) call a slow tool and give up on it after abortAfter, as
// a load-test client with a timeout does.
func abortReports(t *testing.T, ctx context.Context, env *fixtures.Env, n int, abortAfter time.Duration, version string) {
	t.Helper()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cs := connectVersion(t, ctx, env.GatewayURL, env.Tokens[i], version)
		// A healthy call first: proves the path works and warms the pool.
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
			t.Fatalf("get_team_tools: %v", err)
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, abortAfter)
			defer cancel()
			_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "generate_report", Arguments: map[string]any{"seconds": 1.5}})
			if err == nil {
				t.Errorf("generate_report(1.5 s) returned before the client's %s timeout", abortAfter)
			}
		})
	}
	wg.Wait()
}

// commitInFinallyLoad is the load the commit-in-finally tests run: four
// clients speaking version give up on a slow report (1.5 s) after 800 ms.
// A request leaks only if its scoping transaction began before its client
// gave up: with 300 ms, make test once found only 3 of 4 leaked, most
// likely a fourth request served too late on a machine loaded by four
// packages' tests.
// 800 ms leaves room for that and is still well before the report ends.
func commitInFinallyLoad(t *testing.T, variant, version string) (*fixtures.Env, *sampler) {
	const timeout = 3 * time.Second
	env := startStack(t, stack.Config{Variant: variant, IdleInTxTimeout: timeout})
	s := startSampler(t, env, 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	abortReports(t, ctx, env, 4, 800*time.Millisecond, version)
	return env, s
}

// TestCommitInFinallyLeaks proves the leak: clients that give up leave the
// token-scoping session idle in transaction, its last query the membership
// SELECT, until idle_in_transaction_session_timeout (3 s here) kills it —
// and the gateway keeps serving afterwards.
func TestCommitInFinallyLeaks(t *testing.T) {
	// Serial (no t.Parallel): asserts hold times within 1 s of the timeout; it must not share the CPU with other tests.
	skipShort(t)
	const timeout = 3 * time.Second
	env, s := commitInFinallyLoad(t, "commit-in-finally", legacyVersion)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Until four sessions are idle in transaction at once, well before the
	// timeout: a second past the aborts on a quiet machine, later when
	// other packages' tests share the cores (seen in CI: 3 at the 1 s
	// mark, with four packages' tests running).
	// The gateway's /metrics too: it counts the fourth a moment after
	// PostgreSQL shows it (seen: 3 when the sampler had 4).
	waitFor(2*time.Second, func() bool {
		m := scrape(t, env.GatewayMetricsURL)
		return s.MaxState("idle in transaction") >= 4 && m["mcp_gateway_db_pool_unclosed_sessions"] >= 4 && m["mcp_gateway_db_pool_acquired_connections"] >= 4
	})
	m := scrape(t, env.GatewayMetricsURL)
	if got := m["mcp_gateway_db_pool_unclosed_sessions"]; got < 4 {
		t.Errorf("unclosed sessions on /metrics = %g, want at least 4", got)
	}
	if got := m["mcp_gateway_db_pool_acquired_connections"]; got < 4 {
		t.Errorf("acquired connections on /metrics = %g, want at least 4 (held by the leaked sessions)", got)
	}
	if got := s.MaxState("idle in transaction"); got < 4 {
		t.Fatalf("at most %d sessions idle in transaction at once, want at least 4", got)
	}

	checkScopingKilled(t, env, s, 4, timeout)
	// The gateway's pool notices the dead connections and replaces them.
	if !waitFor(2*time.Second, func() bool { return scrape(t, env.GatewayMetricsURL)["mcp_gateway_db_pool_unclosed_sessions"] == 0 }) {
		t.Errorf("unclosed sessions not reaped after the server killed them")
	}
	cs := connect(t, ctx, env.GatewayURL, env.Tokens[10])
	for i := 0; i < 20; i++ {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
			t.Fatalf("call %d after the leaked sessions were killed: %v", i, err)
		}
	}
}

// TestFixedDoesNotLeak runs the same aborts against the fixed variant.
func TestFixedDoesNotLeak(t *testing.T) {
	// Serial (no t.Parallel): asserts no session idle in transaction for 500 ms; it must not share the CPU with other tests.
	skipShort(t)
	env, s := commitInFinallyLoad(t, "fixed", legacyVersion)
	time.Sleep(time.Second)
	if got := scrape(t, env.GatewayMetricsURL)["mcp_gateway_db_pool_unclosed_sessions"]; got != 0 {
		t.Errorf("unclosed sessions on /metrics = %g, want 0", got)
	}
	// The abandoned reports finish on their own (1.5 s) and release.
	waitFor(2*time.Second, func() bool { return scrape(t, env.GatewayMetricsURL)["mcp_gateway_db_pool_acquired_connections"] == 0 })
	if got := scrape(t, env.GatewayMetricsURL)["mcp_gateway_db_pool_acquired_connections"]; got != 0 {
		t.Errorf("acquired connections = %g once the reports finished, want 0", got)
	}
	if long := s.Episodes(minSignatureSpan); len(long) != 0 {
		t.Fatalf("fixed variant held sessions idle in transaction: %+v", long)
	}
	if n := idleTimeoutKills(t, env); n != 0 {
		t.Errorf("postgres log shows %d idle-in-transaction timeouts, want 0", n)
	}
}

// checkScopingKilled waits for at least n stuck sessions to end, and
// checks that each was token scoping's, left idle in transaction on the
// membership SELECT until PostgreSQL's timeout killed it.
func checkScopingKilled(t *testing.T, env *fixtures.Env, s *sampler, n int, timeout time.Duration) {
	t.Helper()
	// The server's timeout releases them: capacity comes back.
	if !waitFor(timeout+2*time.Second, func() bool { return len(s.Episodes(time.Second)) >= n && allEnded(s.Episodes(time.Second)) }) {
		t.Fatalf("stuck sessions not ended within the timeout + 2 s: %+v", s.Episodes(time.Second))
	}
	stuck := s.Episodes(time.Second)
	for _, e := range stuck {
		if !strings.Contains(e.query, "FROM email_team_members") {
			t.Errorf("stuck session's last query is not the token-scoping SELECT: %q", e.query)
		}
		if !e.killed {
			t.Errorf("stuck session (pid %d) was released, not killed by the server", e.pid)
		}
		if h := e.hold(); h < timeout-100*time.Millisecond || h > timeout+time.Second {
			t.Errorf("stuck session (pid %d) held %s, want the %s timeout within 1 s", e.pid, h, timeout)
		}
	}
	t.Logf("%d stuck episodes, holds %s", len(stuck), holds(stuck))
	if k := idleTimeoutKills(t, env); k < n {
		t.Errorf("postgres log shows %d idle-in-transaction timeouts (25P03), want at least %d", k, n)
	}
}

func allEnded(es []episode) bool {
	for _, e := range es {
		if e.end.IsZero() {
			return false
		}
	}
	return true
}

func holds(es []episode) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(e.hold().Round(10 * time.Millisecond).String())
	}
	return b.String()
}

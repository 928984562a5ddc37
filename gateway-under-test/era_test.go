package gateway_test

import (
	"context"
	"slices"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBothEras: one stateful gateway endpoint serves go-sdk's client in
// its default protocol, 2026-07-28 (server/discover, no session), and a
// go-sdk client pinned to 2025 (the handshake, a session), and token
// scoping treats them alike: both call a tool, see the same team tools,
// and an unknown token is refused in both.
func TestBothEras(t *testing.T) {
	// Parallel: it waits on the gateway and asserts no timing.
	t.Parallel()
	env := startStack(t, stack.Config{NoGateway: true})
	gw := startGateway(t, env, gateway.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var lists [][]string
	for _, version := range []string{"", legacyVersion} {
		cs := connectVersion(t, ctx, gw.URL(), env.Tokens[3], version)
		if sessions := cs.ID() != ""; sessions != (version == legacyVersion) {
			t.Errorf("protocol %q: session id %q", version, cs.ID())
		}
		res, err := callTool(ctx, cs, "get_team_tools", nil)
		if err != nil || res.IsError || resultText(res) == "" {
			t.Fatalf("protocol %q: get_team_tools: %v %+v", version, err, res)
		}
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("protocol %q: tools/list: %v", version, err)
			}
			names = append(names, tool.Name)
		}
		lists = append(lists, names)
		if _, err := dial(ctx, gw.URL(), "no-such-token", version); err == nil {
			t.Errorf("protocol %q: an unknown token was accepted", version)
		}
	}
	if !slices.Equal(lists[0], lists[1]) || len(lists[0]) == 0 {
		t.Errorf("the eras see different tools for the same token:\n2026-07-28 %v\n%s %v", lists[0], legacyVersion, lists[1])
	}
	m := scrape(t, gw.MetricsURL())
	if got := m[`mcp_gateway_mcp_requests_total{method="server/discover",result="ok"}`]; got < 1 {
		t.Errorf("server/discover answered ok on /metrics = %g, want at least 1", got)
	}
	if got := m["mcp_gateway_db_pool_acquired_connections"]; got != 0 {
		t.Errorf("acquired connections after both eras = %g, want 0", got)
	}
}

// TestCommitInFinallyLeaksModern: the incident's leak reproduces from
// 2026-07-28 clients: no session, every request scoped on its own, and the
// clients that give up still leave token scoping's session idle in
// transaction until PostgreSQL's timeout kills it.
func TestCommitInFinallyLeaksModern(t *testing.T) {
	// Serial (no t.Parallel): asserts hold times within 1 s of the timeout; it must not share the CPU with other tests.
	skipShort(t)
	const timeout = 3 * time.Second
	env, s := commitInFinallyLoad(t, "commit-in-finally", "")
	// Until four sessions are idle in transaction at once, well before the
	// timeout: a second past the aborts on a quiet machine, later when
	// other packages' tests share the cores (seen in CI: 3 at the 1 s
	// mark, with four packages' tests running).
	waitFor(2*time.Second, func() bool { return s.MaxState("idle in transaction") >= 4 })
	if got := s.MaxState("idle in transaction"); got < 4 {
		t.Fatalf("at most %d sessions idle in transaction at once, want at least 4", got)
	}
	checkScopingKilled(t, env, s, 4, timeout)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connectVersion(t, ctx, env.GatewayURL, env.Tokens[10], "")
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
		t.Fatalf("a call after the leaked sessions were killed: %v", err)
	}
}

package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func startStack(t *testing.T, variant string, iit time.Duration) *fixtures.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := fixtures.Run(ctx, fixtures.Config{Variant: variant, IdleInTxTimeout: iit, Users: 20, GatewayPoolSize: 10, PgBouncerPoolSize: 10})
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		t.Skipf("PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	return env
}

func connect(t *testing.T, ctx context.Context, env *fixtures.Env, user int) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "leak-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             env.GatewayURL,
		HTTPClient:           &http.Client{Transport: bearerTransport{env.Tokens[user]}},
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("connect MCP client: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type backend struct {
	state, query string
	stateChange  time.Time
}

func idleInTx(t *testing.T, ctx context.Context, env *fixtures.Env) []backend {
	t.Helper()
	conn, err := pgx.Connect(ctx, env.ProbeDSN)
	if err != nil {
		t.Fatalf("connect probe: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT state, query, state_change FROM pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend' AND state LIKE 'idle in transaction%'`, env.Database)
	if err != nil {
		t.Fatalf("query pg_stat_activity: %v", err)
	}
	var out []backend
	var b backend
	_, err = pgx.ForEachRow(rows, []any{&b.state, &b.query, &b.stateChange}, func() error { out = append(out, b); return nil })
	if err != nil {
		t.Fatalf("read pg_stat_activity: %v", err)
	}
	return out
}

// abortReports has each of n clients call a slow tool and give up on it
// after abortAfter, as a load-test client with a timeout does.
func abortReports(t *testing.T, ctx context.Context, env *fixtures.Env, n int, abortAfter time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cs := connect(t, ctx, env, i)
		// A healthy call first: proves the path works and warms the pool.
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
			t.Fatalf("get_team_tools: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, abortAfter)
			defer cancel()
			_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "generate_report", Arguments: map[string]any{"seconds": 1.5}})
			if err == nil {
				t.Errorf("generate_report(1.5 s) returned before the client's %s timeout", abortAfter)
			}
		}()
	}
	wg.Wait()
}

// TestCommitInFinallyLeaks proves the leak: clients that give up leave the
// token-scoping session idle in transaction, its last query the membership
// SELECT, until idle_in_transaction_session_timeout kills it.
func TestCommitInFinallyLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	const timeout = 3 * time.Second
	env := startStack(t, "commit-in-finally", timeout)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	abortReports(t, ctx, env, 4, 300*time.Millisecond)
	time.Sleep(time.Second) // well past the aborts, well before the timeout
	stuck := idleInTx(t, ctx, env)
	if len(stuck) < 4 {
		t.Fatalf("want at least 4 sessions idle in transaction after 4 aborted requests, got %d: %+v", len(stuck), stuck)
	}
	for _, b := range stuck {
		if !strings.Contains(b.query, "FROM email_team_members") {
			t.Errorf("stuck session's last query is not the token-scoping SELECT: %q", b.query)
		}
	}
	// The server's timeout releases them: capacity comes back.
	time.Sleep(timeout + time.Second)
	if left := idleInTx(t, ctx, env); len(left) != 0 {
		t.Fatalf("sessions still idle in transaction after idle_in_transaction_session_timeout: %+v", left)
	}
	// The gateway keeps serving after the server killed the leaked sessions.
	cs := connect(t, ctx, env, 10)
	for i := 0; i < 20; i++ {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_team_tools"}); err != nil {
			t.Fatalf("call %d after the leaked sessions were killed: %v", i, err)
		}
	}
}

// TestFixedDoesNotLeak runs the same aborts against the fixed variant.
func TestFixedDoesNotLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	env := startStack(t, "fixed", 3*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	abortReports(t, ctx, env, 4, 300*time.Millisecond)
	time.Sleep(time.Second)
	if stuck := idleInTx(t, ctx, env); len(stuck) != 0 {
		t.Fatalf("fixed variant left sessions idle in transaction: %+v", stuck)
	}
}

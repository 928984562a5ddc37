package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// TestSQLCommentOnTheStack: through PgBouncer in transaction mode, the
// token-scoping statements carry the request's traceparent header and the
// tools' statements the traceparent of params._meta, as sqlcommenter
// comments that pg_stat_activity shows; the session commit-in-finally
// leaks keeps its request's comment to the end.
func TestSQLCommentOnTheStack(t *testing.T) {
	// Serial (no t.Parallel): an 800 ms client timeout must end a 1.5 s report in between; it must not share the CPU with other tests.
	skipShort(t)
	const (
		header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		meta   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	)
	env := startStack(t, stack.Config{Variant: "commit-in-finally", IdleInTxTimeout: 3 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "leakbench-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: env.GatewayURL,
		HTTPClient: &http.Client{Transport: headerTransport{base: http.DefaultTransport,
			headers: map[string]string{"Authorization": "Bearer " + env.Tokens[0], "Traceparent": header}}},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	probe, err := pgx.Connect(ctx, env.ProbeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(context.Background())
	queries := func() map[string]string { // state -> query, of the gateway's backends
		rows, err := probe.Query(ctx, `SELECT state, query FROM pg_stat_activity
WHERE datname = $1 AND application_name = 'mcp-gateway' AND state <> 'idle'`, env.Database)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		var state, q string
		_, err = pgx.ForEachRow(rows, []any{&state, &q}, func() error { out[state] = q; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	cctx, ccancel := context.WithTimeout(ctx, 800*time.Millisecond)
	defer ccancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "generate_report", Arguments: map[string]any{"seconds": 1.5},
			Meta: mcp.Meta{"traceparent": meta}})
		done <- err
	}()
	var during map[string]string
	waitFor(700*time.Millisecond, func() bool {
		during = queries()
		return during["active"] != "" && during["idle in transaction"] != ""
	})
	wantScoping := "/*application='mcp-gateway',route='tools%2Fcall',traceparent='" + header + "'*/"
	wantTool := "/*application='mcp-gateway',route='tools%2Fcall',traceparent='" + meta + "'*/"
	if q := during["idle in transaction"]; !strings.Contains(q, "email_team_members") || !strings.HasSuffix(q, wantScoping) {
		t.Errorf("token scoping's session shows %q; want the membership SELECT ending in %s", q, wantScoping)
	}
	if q := during["active"]; !strings.Contains(q, "pg_sleep") || !strings.HasSuffix(q, wantTool) {
		t.Errorf("the tool's statement shows %q; want the report ending in %s", q, wantTool)
	}
	if err := <-done; err == nil {
		t.Fatal("generate_report(1.5 s) returned before the client's 800 ms timeout")
	}
	time.Sleep(time.Second) // the report has ended; the leaked session stays
	if q := queries()["idle in transaction"]; !strings.HasSuffix(q, wantScoping) {
		t.Errorf("the leaked session shows %q; want its request's comment %s", q, wantScoping)
	}
}

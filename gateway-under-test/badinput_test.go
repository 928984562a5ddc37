package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/gateway-under-test/upstream"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// rawPost sends one MCP POST with the given headers and body and returns
// the status and headers.
func rawPost(t *testing.T, url string, header map[string]string, body io.Reader) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

// unsized hides a reader's length, so the request goes out chunked.
type unsized struct{ io.Reader }

// TestBadInput sends each kind of bad input to every variant and checks
// that it gets the error the MCP spec (or HTTP) names and that none of it
// leaves a connection behind: none of these paths is one a variant is meant
// to leak on.
//
// commit-in-finally (and commit-in-finally-rare, the same cleanup) runs
// with JSON answers only. With SSE answers go-sdk's
// client hangs up the stream as soon as it has read its response, which
// races the server's end of the request: when the hang-up wins (seen under
// -race), the request's context is cancelled before the finally's commit —
// that variant's documented trigger, whatever the input — and it leaks.
// session-outside-request does not run: its trigger is any token used twice
// within a second, which a sequence of bad requests is.
func TestBadInput(t *testing.T) {
	// Serial (no t.Parallel): asserts no session idle in transaction for 500 ms, which a starved gateway goroutine can exceed; it must not share the CPU with other tests.
	env := startStack(t, stack.Config{NoGateway: true})
	failing := startUpstream(t, upstream.Config{FailureRate: 1})
	s := startSampler(t, env, 100*time.Millisecond)
	for _, v := range gateway.Variants {
		for _, json := range []bool{true, false} {
			if !json && (v == gateway.VariantCommitInFinally || v == gateway.VariantCommitInFinallyRare) {
				continue // the same cleanup: an SSE hang-up cancels the request before its commit
			}
			if v == gateway.VariantSessionOutsideRequest {
				continue // leaks on any token used twice within a second, bad input or not
			}
			badInput(t, env, s, gateway.Config{Variant: string(v), JSONResponse: json, UpstreamURL: failing.URL(), PoolSize: 4, PageSize: 3})
		}
	}
}

func badInput(t *testing.T, env *fixtures.Env, s *sampler, cfg gateway.Config) {
	t.Run(fmt.Sprintf("%s/json=%v", cfg.Variant, cfg.JSONResponse), func(t *testing.T) {
		gw := startGateway(t, env, cfg)
		begin := time.Now()
		badHTTP(t, gw.URL(), env.Tokens[0])
		badMCP(t, gw.URL(), env.Tokens[1])

		// Nothing held, nothing leaked, nothing idle in transaction.
		var m map[string]float64
		waitFor(2*time.Second, func() bool {
			m = scrape(t, gw.MetricsURL())
			return m["mcp_gateway_db_pool_acquired_connections"] == 0
		})
		if got := m["mcp_gateway_db_pool_acquired_connections"]; got != 0 {
			t.Errorf("acquired connections after the bad input = %g, want 0", got)
		}
		if got := m["mcp_gateway_db_pool_unclosed_sessions"]; got != 0 {
			t.Errorf("unclosed sessions after the bad input = %g, want 0", got)
		}
		for _, e := range s.Episodes(minSignatureSpan) {
			if e.start.After(begin) {
				t.Errorf("session idle in transaction for %s after bad input, last query %q", e.hold(), e.query)
			}
		}
	})
}

// badHTTP checks the answers that come before MCP: authentication, the
// session id, the body.
func badHTTP(t *testing.T, url, token string) {
	bearer := "Bearer " + token
	big := bytes.Repeat([]byte("x"), 2<<20) // over the default 1 MiB limit
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   io.Reader
		want   int
		auth   string // WWW-Authenticate must contain this
	}{
		{"missing token", nil, strings.NewReader(initializeBody), http.StatusUnauthorized, "Bearer"},
		{"not a bearer token", map[string]string{"Authorization": "Basic dXNlcjpwdw=="}, strings.NewReader(initializeBody), http.StatusUnauthorized, "Bearer"},
		{"unknown token", map[string]string{"Authorization": "Bearer lbt_not-a-token"}, strings.NewReader(initializeBody), http.StatusUnauthorized, `error="invalid_token"`},
		{"unknown session id", map[string]string{"Authorization": bearer, "Mcp-Session-Id": "no-such-session"},
			strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), http.StatusNotFound, ""},
		{"oversized body", map[string]string{"Authorization": bearer}, bytes.NewReader(big), http.StatusRequestEntityTooLarge, ""},
		{"oversized chunked body", map[string]string{"Authorization": bearer}, unsized{bytes.NewReader(big)}, http.StatusRequestEntityTooLarge, ""},
		{"malformed JSON", map[string]string{"Authorization": bearer}, strings.NewReader(`{"jsonrpc":"2.0","id":`), http.StatusBadRequest, ""},
		{"wrong content type", map[string]string{"Authorization": bearer, "Content-Type": "text/plain"}, strings.NewReader(initializeBody), http.StatusUnsupportedMediaType, ""},
	} {
		code, h := rawPost(t, url, tc.header, tc.body)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, code, tc.want)
		}
		if tc.auth != "" && !strings.Contains(h.Get("WWW-Authenticate"), tc.auth) {
			t.Errorf("%s: WWW-Authenticate %q, want it to contain %q", tc.name, h.Get("WWW-Authenticate"), tc.auth)
		}
	}
}

// badMCP checks the answers inside MCP, through go-sdk's client: JSON-RPC
// errors (-32602 Invalid params) for what names nothing, tool errors
// (isError, so a model can correct itself) for bad tool arguments and for
// what fails while a tool runs.
func badMCP(t *testing.T, url, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := connect(t, ctx, url, token)
	invalidParams := func(name string, err error) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: error %v, want JSON-RPC Invalid params (-32602)", name, err)
		}
	}
	_, err := callTool(ctx, cs, "no_such_tool", nil)
	invalidParams("unknown tool", err)
	_, err = cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "not-a-cursor"})
	invalidParams("tools/list with a bad cursor", err)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "leakbench://teams/99/documents/handbook"})
	invalidParams("another team's document", err)
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "no_such_prompt"})
	invalidParams("unknown prompt", err)
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "team_briefing"})
	invalidParams("prompt without its required argument", err)

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string // in the tool error's text
	}{
		{"generate_report", map[string]any{"seconds": "soon"}, "validating"},
		{"generate_report", map[string]any{"seconds": 99}, "between 0 and 30"},
		{"record_note", map[string]any{"note": 12}, "validating"},
		{"wait_for_run", map[string]any{}, "start one with start_run"},
		{"wait_for_run", map[string]any{"run_id": "x"}, "validating"},
		{"wait_for_run", map[string]any{"run_id": 999999, "max_wait_seconds": 1}, "run 999999 not found"},
		{"wait_for_run", map[string]any{"run_id": 1, "max_wait_seconds": 31}, "between 0 and 30"},
		{"call_upstream", map[string]any{"payload": "x"}, "upstream answered 503"},
		{"call_upstream", map[string]any{"upstream_latency_ms": -1}, "between 0 and 600000"},
	} {
		res, err := callTool(ctx, cs, tc.tool, tc.args)
		if err != nil || !res.IsError || !strings.Contains(resultText(res), tc.want) {
			t.Errorf("%s(%v): result %q (isError %v), error %v; want a tool error containing %q",
				tc.tool, tc.args, resultText(res), res != nil && res.IsError, err, tc.want)
		}
	}
	// A registered tool with a wrong argument type; another team's tool
	// (registered, but not for the caller) is as unknown as no tool.
	var registered string
	mine := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if team, _, ok := strings.Cut(tool.Name, "_"); ok && strings.HasPrefix(team, "team") {
			registered = tool.Name
			mine[team] = true
		}
	}
	if registered == "" {
		t.Fatal("tools/list shows none of the caller's registered team tools")
	}
	for i := 1; i <= 10; i++ { // the stack seeds 10 teams, the caller is in 1 to 3
		if team := fmt.Sprintf("team%d", i); !mine[team] {
			_, err = callTool(ctx, cs, team+"_tool1", nil)
			invalidParams("another team's tool", err)
			break
		}
	}
	res, err := callTool(ctx, cs, registered, map[string]any{"input": 5})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "validating") {
		t.Errorf("%s with a number for input: %v %q", registered, err, resultText(res))
	}
	// The session still works after all that.
	if _, err := callTool(ctx, cs, "get_team_tools", nil); err != nil {
		t.Errorf("get_team_tools after the bad input: %v", err)
	}
}

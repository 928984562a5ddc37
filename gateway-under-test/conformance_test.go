package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingTransport notes the Content-Type and Mcp-Session-Id of every
// answer to a POST, to prove which answer mode the gateway used. With
// legacy set it plays a client that predates server/discover (protocol
// 2025-11-25 and before): it fails that request, and go-sdk's client falls
// back to the initialize handshake.
type recordingTransport struct {
	base         http.RoundTripper
	legacy       bool
	mu           sync.Mutex
	contentTypes map[string]int
	sessionIDs   int
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt.legacy && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Header: http.Header{},
				Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := rt.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && resp.StatusCode == http.StatusOK {
		rt.mu.Lock()
		ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
		rt.contentTypes[ct]++
		if resp.Header.Get("Mcp-Session-Id") != "" {
			rt.sessionIDs++
		}
		rt.mu.Unlock()
	}
	return resp, err
}

// TestConformanceGoSDKClient has go-sdk's own client — an MCP client
// nobody here wrote — use every method the gateway serves, in JSON and SSE
// answer modes, stateful and stateless, with a page size small enough that
// every list is paginated. The gateway serves both eras on one endpoint:
// go-sdk's client negotiates protocol 2026-07-28 (sessionless, via
// server/discover), which has no ping (SEP-2577; go-sdk's Ping does not
// work there, go-sdk #1130), so each mode runs twice: as that client, and
// as a legacy client, which does the handshake (and, stateful, gets a
// session).
func TestConformanceGoSDKClient(t *testing.T) {
	// Parallel: it waits on the gateway and asserts no timing.
	t.Parallel()
	env := startStack(t, stack.Config{NoGateway: true})
	modes := []struct{ stateless, json, legacy bool }{
		{false, false, false}, {false, true, false}, {false, false, true}, {false, true, true},
		{true, false, false}, {true, true, false}, {true, false, true}, {true, true, true},
	}
	for _, mode := range modes {
		name := fmt.Sprintf("stateless=%v/json=%v/legacy=%v", mode.stateless, mode.json, mode.legacy)
		t.Run(name, func(t *testing.T) {
			gw := startGateway(t, env, gateway.Config{Stateless: mode.stateless, JSONResponse: mode.json,
				PageSize: 3, RunDelay: 200 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			rec := &recordingTransport{base: bearerTransport{token: env.Tokens[0]}, legacy: mode.legacy, contentTypes: map[string]int{}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "conformance", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw.URL(), HTTPClient: &http.Client{Transport: rec},
				DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			version := cs.InitializeResult().ProtocolVersion
			handshake := mode.legacy
			sessions := handshake && !mode.stateless
			if modern := version >= "2026-07-28"; modern == handshake {
				t.Fatalf("negotiated protocol %s; want the handshake protocol: %v", version, handshake)
			}
			exerciseEveryMethod(t, ctx, cs, handshake)
			sid := cs.ID()
			if err := cs.Close(); err != nil { // stateful: DELETE ends the session
				t.Errorf("close session: %v", err)
			}
			if sessions != (sid != "") {
				t.Errorf("session id %q, want one: %v", sid, sessions)
			}
			if sid != "" {
				code, _ := rawPost(t, gw.URL(), map[string]string{"Authorization": "Bearer " + env.Tokens[0], "Mcp-Session-Id": sid},
					strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
				if code != http.StatusNotFound {
					t.Errorf("request on the deleted session: status %d, want 404", code)
				}
			}

			want := "text/event-stream"
			if mode.json {
				want = "application/json"
			}
			if len(rec.contentTypes) != 1 || rec.contentTypes[want] == 0 {
				t.Errorf("answers came as %v, want only %s", rec.contentTypes, want)
			}
			if sessions != (rec.sessionIDs != 0) {
				t.Errorf("%d answers carried Mcp-Session-Id, want some: %v", rec.sessionIDs, sessions)
			}
			m := scrape(t, gw.MetricsURL())
			if got := m["mcp_gateway_db_pool_acquired_connections"]; got != 0 {
				t.Errorf("acquired connections after the session = %g, want 0", got)
			}
			if got := m[`mcp_gateway_mcp_requests_total{method="tools/call",result="ok"}`]; got != 7 {
				t.Errorf("successful tools/call on /metrics = %g, want 7", got)
			}
			if got := m[`mcp_gateway_http_requests_total{code="200",handler="/mcp",method="post"}`]; got < 10 {
				t.Errorf("HTTP 200 POSTs on /metrics = %g, want at least 10", got)
			}
		})
	}
}

func exerciseEveryMethod(t *testing.T, ctx context.Context, cs *mcp.ClientSession, ping bool) {
	t.Helper()
	if ping {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Errorf("ping: %v", err)
		}
	}

	// tools/list: the built-in tools and the caller's teams' registered ones.
	var tools []string
	pages := 0
	var cursor string
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("tools/list page %d: %v", pages+1, err)
		}
		pages++
		if len(res.Tools) > 3 {
			t.Errorf("tools/list page of %d tools, page size 3", len(res.Tools))
		}
		for _, tool := range res.Tools {
			tools = append(tools, tool.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	var registered string
	for _, want := range []string{"call_upstream", "generate_report", "get_team_tools", "record_note", "start_run", "wait_for_run"} {
		if !contains(tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, tools)
		}
	}
	for _, name := range tools {
		if strings.HasPrefix(name, "team") {
			registered = name
		}
	}
	if registered == "" || pages < 3 {
		t.Fatalf("tools/list: %d pages, tools %v; want several pages with registered team tools", pages, tools)
	}
	for i := 1; i < len(tools); i++ {
		if tools[i-1] >= tools[i] {
			t.Errorf("tools/list not in order or repeats: %v", tools)
		}
	}

	// tools/call: every built-in tool and a registered one.
	ok := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("tools/call %s: tool error: %s", name, resultText(res))
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out
	}
	ok("get_team_tools", nil)
	ok("record_note", map[string]any{"note": "conformance"})
	ok("generate_report", map[string]any{"seconds": 0})
	run := ok("start_run", map[string]any{"name": "conformance"})
	if out := ok("wait_for_run", map[string]any{"run_id": run["run_id"], "max_wait_seconds": 5}); out["status"] != "done" {
		t.Errorf("wait_for_run: %v, want status done", out)
	}
	if out := ok("call_upstream", map[string]any{"payload": "ping"}); out["http_status"] != 200.0 {
		t.Errorf("call_upstream: %v", out)
	}
	if out := ok(registered, map[string]any{"input": "hello"}); out["recorded"] != true {
		t.Errorf("registered tool %s: %v", registered, out)
	}

	// resources/list (paginated by the iterator), resources/read,
	// resources/templates/list.
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		uris = append(uris, r.URI)
	}
	if len(uris) < 2 {
		t.Fatalf("resources/list: %v, want the caller's team documents", uris)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uris[0]})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text == "" {
		t.Errorf("resources/read %s: %v %+v", uris[0], err, read)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 {
		t.Errorf("resources/templates/list: %v %+v", err, tmpl)
	}

	// prompts/list and prompts/get.
	var prompts []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		prompts = append(prompts, p.Name)
	}
	if !contains(prompts, "team_briefing") || !contains(prompts, "recent_notes") {
		t.Errorf("prompts/list: %v", prompts)
	}
	team := strings.Split(strings.TrimPrefix(uris[0], "leakbench://teams/"), "/")[0]
	brief, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "team_briefing", Arguments: map[string]string{"team_id": team}})
	if err != nil || len(brief.Messages) == 0 {
		t.Errorf("prompts/get team_briefing: %v %+v", err, brief)
	}
	notes, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "recent_notes", Arguments: map[string]string{"limit": "3"}})
	if err != nil || len(notes.Messages) == 0 || !strings.Contains(notes.Messages[0].Content.(*mcp.TextContent).Text, "conformance") {
		t.Errorf("prompts/get recent_notes: %v %+v", err, notes)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

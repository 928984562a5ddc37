package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// answer is how a scripted server answers one method.
type answer struct {
	status      int    // 0: 200
	sessionID   string // an Mcp-Session-Id header
	contentType string // "": application/json
	result      string // the JSON-RPC result; or
	body        string // the whole body, as is
}

// okDiscover offers both eras.
const okDiscover = `{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}`

// scripted answers each method as script says (server/discover by default
// with okDiscover, tools/call with a text result), anything else 400.
func scripted(script map[string]answer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		method := r.Header.Get("Mcp-Method")
		if method == "" { // a 2025 request
			var m struct{ Method string }
			_ = json.Unmarshal(body, &m)
			method = "2025:" + m.Method
		}
		a, ok := script[method]
		if !ok {
			switch method {
			case "server/discover":
				a = answer{result: okDiscover}
			case "tools/call":
				a = answer{result: `{"content":[{"type":"text","text":"ok"}]}`}
			default:
				http.Error(w, "unscripted "+method, http.StatusBadRequest)
				return
			}
		}
		if a.sessionID != "" {
			w.Header().Set("Mcp-Session-Id", a.sessionID)
		}
		ct := a.contentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		if a.status != 0 {
			w.WriteHeader(a.status)
		}
		if a.body == "" {
			a.body = `{"jsonrpc":"2.0","id":` + mcptest.IDOf(body) + `,"result":` + a.result + `}`
		}
		_, _ = io.WriteString(w, a.body)
	})
}

// TestModernBadInput: servers that break 2026-07-28 get a clear error of
// kind protocol (or the server's own refusal), quoting the server's
// answer with the token masked — never a hang or a panic.
func TestModernBadInput(t *testing.T) {
	const token = "s3cret-token-modern"
	tests := []struct {
		name    string
		setting string
		script  map[string]answer
		call    bool   // the error is tools/call's, after a good Initialize
		kind    string // of the error
		want    string // in its message
	}{
		{"discover result not an object", Version20260728, map[string]answer{"server/discover": {result: `["2026-07-28"]`}},
			false, KindProtocol, `malformed result`},
		{"supportedVersions not a list", Version20260728, map[string]answer{"server/discover": {result: `{"supportedVersions":"2026-07-28","capabilities":{}}`}},
			false, KindProtocol, `answered {"supportedVersions":"2026-07-28"`},
		{"no supportedVersions", VersionAuto, map[string]answer{"server/discover": {result: `{"capabilities":{},"note":"` + token + `"}`}},
			false, KindProtocol, `lists no supportedVersions; the server answered {"capabilities":{},"note":"xxxxx`},
		{"no capabilities", VersionAuto, map[string]answer{"server/discover": {result: `{"supportedVersions":["2026-07-28"]}`}},
			false, KindProtocol, `no capabilities object`},
		{"discover answer assigns a session", VersionAuto, map[string]answer{"server/discover": {result: okDiscover, sessionID: "sess-1"}},
			false, KindProtocol, `which has no sessions, but assigned one (Mcp-Session-Id "sess-1")`},
		{"header mismatch is not a reason to fall back", VersionAuto, map[string]answer{"server/discover": {status: 400,
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method"}}`}},
			false, KindJSONRPC, `Header mismatch`},
		{"then demands a session (400)", Version20260728, map[string]answer{"tools/call": {status: 400, contentType: "text/plain",
			body: "Bad Request: No valid session ID provided for " + token}},
			true, KindHTTP, `which has no sessions, but the server demands one: Bad Request: No valid session ID provided for xxxxx`},
		{"then demands the handshake", VersionAuto, map[string]answer{"tools/call": {
			body: `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"method \"tools/call\" is invalid during session initialization"}}`}},
			true, KindJSONRPC, `but the server demands one: method "tools/call" is invalid during session initialization`},
		{"then assigns a session", Version20260728, map[string]answer{"tools/call": {result: `{"content":[]}`, sessionID: "sess-2"}},
			true, KindProtocol, `assigned one (Mcp-Session-Id "sess-2")`},
		{"unknown resultType", Version20260728, map[string]answer{"tools/call": {result: `{"content":[],"resultType":"teleport"}`}},
			true, KindProtocol, `unknown resultType "teleport"; the server answered {"content":[],"resultType":"teleport"}`},
		{"input_required", Version20260728, map[string]answer{"tools/call": {result: `{"resultType":"input_required","inputRequests":{}}`}},
			true, KindProtocol, `asks for input (resultType input_required)`},
		{"resultType in SSE", Version20260728, map[string]answer{"tools/call": {contentType: "text/event-stream",
			body: "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ResultType\":\"later\"}}\n\n"}},
			true, KindProtocol, `unknown resultType "later"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(scripted(tt.script))
			defer ts.Close()
			c := NewClient(ts.URL, ClientOptions{RequestTimeout: 2 * time.Second, ProtocolVersion: tt.setting})
			defer c.CloseIdleConnections()
			ctx := context.Background()
			s := c.NewSession(token)
			start := time.Now()
			err := s.Initialize(ctx)
			if tt.call {
				if err != nil {
					t.Fatalf("Initialize: %v", err)
				}
				err = s.CallTool(ctx, "echo", nil)
			}
			if Classify(err) != tt.kind || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v (kind %q); want kind %q with %q", err, Classify(err), tt.kind, tt.want)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error leaks the token: %v", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestAutoLegacyAnswers: auto falls back to the handshake when
// server/discover gets what a legacy server answers a method it does not
// know — 404, 405, 400 in plain text or with a JSON-RPC error that is not
// one of 2026-07-28's, a JSON-RPC error in a 200 — and for a modern
// server's UnsupportedProtocolVersion; it does not fall back when the
// target fails otherwise.
func TestAutoLegacyAnswers(t *testing.T) {
	handshake := map[string]answer{
		"2025:initialize":                {result: `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`, sessionID: "s-1"},
		"2025:notifications/initialized": {status: http.StatusAccepted, body: " "},
	}
	for name, discover := range map[string]answer{
		"404":            {status: 404, contentType: "text/plain", body: "404 page not found"},
		"405":            {status: 405, contentType: "text/plain", body: "Method Not Allowed"},
		"400 text":       {status: 400, contentType: "text/plain", body: "Bad Request: Mcp-Session-Id header is required"},
		"400 json-rpc":   {status: 400, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`},
		"200 json-rpc":   {body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`},
		"unsupported":    {status: 400, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"]}}}`},
		"2025-only list": {result: `{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{}}`, sessionID: "legacy-discover"},
	} {
		t.Run(name, func(t *testing.T) {
			script := map[string]answer{"server/discover": discover}
			for k, v := range handshake {
				script[k] = v
			}
			ts := httptest.NewServer(scripted(script))
			defer ts.Close()
			c := NewClient(ts.URL, ClientOptions{ProtocolVersion: VersionAuto})
			defer c.CloseIdleConnections()
			s := c.NewSession("")
			if err := s.Initialize(context.Background()); err != nil || s.Era() != Era2025 || s.ID() != "s-1" {
				t.Fatalf("Initialize: %v, era %q, session %q; want the handshake's session", err, s.Era(), s.ID())
			}
		})
	}
	for name, discover := range map[string]answer{
		"500": {status: 500, contentType: "text/plain", body: "internal error"},
		"401": {status: 401, contentType: "text/plain", body: "bad token"},
	} {
		ts := httptest.NewServer(scripted(map[string]answer{"server/discover": discover}))
		c := NewClient(ts.URL, ClientOptions{ProtocolVersion: VersionAuto})
		if err := c.NewSession("").Initialize(context.Background()); Classify(err) != KindHTTP || !strings.HasPrefix(err.Error(), "server/discover: http") {
			t.Errorf("%s: %v, want server/discover's http error", name, err)
		}
		c.CloseIdleConnections()
		ts.Close()
	}
}

// TestMcpNameEncoding: names that are not plain visible ASCII go in the
// Base64 sentinel (SEP-2243's table), so no name can inject a header line.
func TestMcpNameEncoding(t *testing.T) {
	for in, want := range map[string]string{
		"get_weather":          "get_weather",
		"file:///a b.txt":      "file:///a b.txt",
		"Hello, 世界":            "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":             "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":         "=?base64?bGluZTEKbGluZTI=?=",
		"x\r\nX-Evil: 1":       "=?base64?eA0KWC1FdmlsOiAx?=",
		"=?base64?literal?=":   "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"=?base64?only-prefix": "=?base64?only-prefix",
	} {
		if got := string(appendHeaderValue(nil, in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

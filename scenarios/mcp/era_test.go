package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestModernConformance drives the lean client in the 2026-07-28 era
// against go-sdk's server (stateless, and dual-era as the reference
// gateway serves), set to 2026-07-28 and to auto, and checks what the
// server received: no handshake, no session, the _meta members (merged
// with the trace context) and the standard headers on every request.
func TestModernConformance(t *testing.T) {
	const token = "tok-modern"
	for _, mode := range mcptest.ModernModes {
		for _, setting := range []string{Version20260728, VersionAuto} {
			t.Run(mode.Name+"/"+setting, func(t *testing.T) {
				o := mode.Opts
				o.PageSize, o.ExtraTools = 2, 5 // 8 tools: 4 pages
				srv := mcptest.Start(t, o)
				c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second, ProtocolVersion: setting})
				defer c.CloseIdleConnections()
				ctx := context.Background()
				s := c.NewSession(token)
				if err := s.Initialize(ctx); err != nil {
					t.Fatalf("Initialize: %v", err)
				}
				if s.Era() != Era2026 || s.ProtocolVersion() != Version20260728 || s.ID() != "" {
					t.Fatalf("era %q version %q session %q; want %q %q and no session", s.Era(), s.ProtocolVersion(), s.ID(), Era2026, Version20260728)
				}
				exerciseModern(t, ctx, s)
				if err := s.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
				if s.Era() != EraNone {
					t.Errorf("era %q after Close", s.Era())
				}
				if n := srv.Sessions(); n != 0 {
					t.Errorf("%d server sessions left", n)
				}
				checkModernWire(t, srv.Requests(), token)
			})
		}
	}
}

// exerciseModern sends every request a load-test user sends, one of them
// traced.
func exerciseModern(t *testing.T, ctx context.Context, s *Session) {
	t.Helper()
	if err := s.Discover(ctx); err != nil {
		t.Errorf("Discover: %v", err)
	}
	if err := s.ListTools(ctx); err != nil {
		t.Errorf("ListTools: %v", err)
	}
	if err := s.CallTool(traced(ctx), "echo", []byte(`{"text":"hello"}`)); err != nil {
		t.Errorf("CallTool echo: %v", err)
	}
	if err := s.CallTool(ctx, "fail", nil); Classify(err) != KindTool || !strings.Contains(err.Error(), "failed on purpose") {
		t.Errorf("CallTool fail: %v, want kind %q with the tool's message", err, KindTool)
	}
	if err := s.CallTool(ctx, "no-such-tool", nil); Classify(err) != KindJSONRPC {
		t.Errorf("CallTool of an unknown tool: %v, want kind %q", err, KindJSONRPC)
	}
	if err := s.ListResources(ctx); err != nil {
		t.Errorf("ListResources: %v", err)
	}
	if err := s.ReadResource(ctx, "file:///r1.txt"); err != nil {
		t.Errorf("ReadResource: %v", err)
	}
	if err := s.ListPrompts(ctx); err != nil {
		t.Errorf("ListPrompts: %v", err)
	}
	if err := s.GetPrompt(ctx, "greet", []byte(`{"who":"ada"}`)); err != nil {
		t.Errorf("GetPrompt: %v", err)
	}
}

// checkModernWire checks what a 2026-07-28 client must send, request by
// request.
func checkModernWire(t *testing.T, reqs []mcptest.Request, token string) {
	t.Helper()
	wantName := map[string]string{"tools/call": "", "prompts/get": "greet", "resources/read": "file:///r1.txt"}
	methods := map[string]int{}
	traced := 0
	for i, r := range reqs {
		where := r.Method + " " + r.RPCMethod
		methods[r.RPCMethod]++
		switch {
		case r.Method != "POST":
			t.Errorf("request %d: %s; 2026-07-28 sends only POSTs", i, where)
		case r.SessionID != "":
			t.Errorf("request %d (%s): Mcp-Session-Id %q", i, where, r.SessionID)
		case r.Version != Version20260728:
			t.Errorf("request %d (%s): MCP-Protocol-Version %q", i, where, r.Version)
		case r.Header.Get("Mcp-Method") != r.RPCMethod:
			t.Errorf("request %d (%s): Mcp-Method %q", i, where, r.Header.Get("Mcp-Method"))
		case r.Authorized != "Bearer "+token:
			t.Errorf("request %d (%s): Authorization %q", i, where, r.Authorized)
		}
		if want, ok := wantName[r.RPCMethod]; ok {
			var p struct{ Name, URI string }
			_ = json.Unmarshal(r.Params, &p)
			if want == "" {
				want = p.Name
			}
			if got := r.Header.Get("Mcp-Name"); got != want || got != p.Name+p.URI {
				t.Errorf("request %d (%s): Mcp-Name %q, want %q", i, where, got, want)
			}
		} else if got := r.Header.Get("Mcp-Name"); got != "" {
			t.Errorf("request %d (%s): Mcp-Name %q on a method without one", i, where, got)
		}
		m := r.Meta
		if string(m["io.modelcontextprotocol/protocolVersion"]) != `"`+Version20260728+`"` ||
			string(m["io.modelcontextprotocol/clientCapabilities"]) != `{}` ||
			!strings.Contains(string(m["io.modelcontextprotocol/clientInfo"]), `"name":"leakbench"`) {
			t.Errorf("request %d (%s): _meta %v lacks the 2026-07-28 members", i, where, m)
		}
		if string(m["traceparent"]) == `"`+wantTraceparent+`"` {
			traced++
		}
	}
	if methods["initialize"] != 0 || methods["notifications/initialized"] != 0 {
		t.Errorf("the handshake was sent: %v", methods)
	}
	if methods["server/discover"] != 2 || methods["tools/list"] != 4 || methods["tools/call"] != 3 {
		t.Errorf("requests by method %v; want 2 server/discover, 4 tools/list pages, 3 tools/call", methods)
	}
	if traced != 1 {
		t.Errorf("%d requests carried the traceparent in _meta beside the 2026-07-28 members, want 1", traced)
	}
}

// TestAutoFallsBack: against a server that does not serve 2026-07-28
// (go-sdk stateful: its server/discover lists only 2025 versions), auto
// does the handshake, asking for the newest 2025 version, and the session
// then speaks 2025 as before: a session id, no _meta members, no standard
// headers. A pinned 2026-07-28 is refused with the server's offer.
func TestAutoFallsBack(t *testing.T) {
	ctx := context.Background()
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	c := NewClient(srv.URL, ClientOptions{ProtocolVersion: VersionAuto})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	if err := s.Initialize(ctx); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	if s.Era() != Era2025 || s.ProtocolVersion() != newest2025 || s.ID() == "" {
		t.Fatalf("era %q version %q session %q; want %q %q with a session", s.Era(), s.ProtocolVersion(), s.ID(), Era2025, newest2025)
	}
	if err := s.CallTool(ctx, "echo", []byte(`{"text":"x"}`)); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) < 4 || reqs[0].RPCMethod != "server/discover" || reqs[1].RPCMethod != "initialize" {
		t.Fatalf("requests %v: want server/discover, then initialize", reqs)
	}
	for _, r := range reqs[1:] {
		if r.Header.Get("Mcp-Method") != "" || r.Meta["io.modelcontextprotocol/protocolVersion"] != nil {
			t.Errorf("%s %s after the fallback carries 2026-07-28's header or _meta", r.Method, r.RPCMethod)
		}
	}

	pinned := NewClient(srv.URL, ClientOptions{ProtocolVersion: Version20260728})
	defer pinned.CloseIdleConnections()
	err := pinned.NewSession("").Initialize(ctx)
	if Classify(err) != KindProtocol || !strings.Contains(err.Error(), "does not offer 2026-07-28 (supportedVersions 2025-11-25") {
		t.Errorf("2026-07-28 pinned against a 2025 server: %v", err)
	}
}

// TestDualEraPinned2025: against a dual-era server, a pinned 2025
// version and the default setting still do the handshake.
func TestDualEraPinned2025(t *testing.T) {
	ctx := context.Background()
	srv := mcptest.Start(t, mcptest.Options{SDK: true, DualEra: true})
	for _, setting := range []string{"", "2025-03-26"} {
		c := NewClient(srv.URL, ClientOptions{ProtocolVersion: setting})
		s := c.NewSession("")
		if err := s.Initialize(ctx); err != nil || s.Era() != Era2025 || s.ID() == "" {
			t.Errorf("setting %q: %v, era %q, session %q", setting, err, s.Era(), s.ID())
		}
		if err := s.CallTool(ctx, "echo", []byte(`{"text":"x"}`)); err != nil {
			t.Errorf("setting %q: CallTool: %v", setting, err)
		}
		_ = s.Close(ctx)
		c.CloseIdleConnections()
	}
	for _, r := range srv.Requests() {
		if r.RPCMethod == "server/discover" {
			t.Errorf("a 2025 setting sent server/discover")
		}
	}
}

func TestValidVersionSetting(t *testing.T) {
	for v, want := range map[string]bool{"": true, "auto": true, "2026-07-28": true, "2025-06-18": true,
		"2025-11-25": true, "negotiate": false, "2024-11-05": false, "2027-01-01": false} {
		if got := ValidVersionSetting(v); got != want {
			t.Errorf("ValidVersionSetting(%q) = %v", v, got)
		}
	}
}

package scenarios

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClientConformance drives the lean client against the real go-sdk
// server in all four answer modes.
func TestClientConformance(t *testing.T) {
	const token = "tok-conformance"
	for _, mode := range sdkModes {
		t.Run(mode.name, func(t *testing.T) {
			o := mode.opts
			o.PageSize, o.ExtraTools = 2, 5 // 8 tools: 4 pages
			srv := newSDKServer(t, o)
			c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second})
			defer c.CloseIdleConnections()
			ctx := context.Background()
			s := c.NewSession(token)

			if err := s.Initialize(ctx); err != nil {
				t.Fatalf("Initialize: %v", err)
			}
			if got := s.ProtocolVersion(); got != ProtocolVersion {
				t.Errorf("negotiated version %q, want %q", got, ProtocolVersion)
			}
			if stateful := !o.Stateless; stateful != (s.ID() != "") {
				t.Errorf("session id %q, stateful=%v", s.ID(), stateful)
			}

			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			want := []string{"echo", "fail", "slow", "tool00", "tool01", "tool02", "tool03", "tool04"}
			if !slices.Equal(names, want) {
				t.Errorf("tools = %v, want %v", names, want)
			}

			res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hello"})
			if err != nil {
				t.Fatalf("CallTool echo: %v", err)
			}
			if len(res.Content) != 1 || res.Content[0].Text != "hello" || res.IsError {
				t.Errorf("echo result = %+v", res)
			}

			res, err = s.CallTool(ctx, "fail", nil)
			if Classify(err) != KindTool || res == nil || !res.IsError {
				t.Errorf("CallTool fail: res %+v, err %v (kind %q), want kind %q", res, err, Classify(err), KindTool)
			}
			if err != nil && !strings.Contains(err.Error(), "failed on purpose") {
				t.Errorf("tool error %q lacks the tool's message", err)
			}

			_, err = s.CallTool(ctx, "no-such-tool", nil)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindJSONRPC || e.Code != -32602 {
				t.Errorf("CallTool unknown: err %v, want kind %q code -32602", err, KindJSONRPC)
			}

			if err := s.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
			if n := srv.sessions(); n != 0 {
				t.Errorf("%d server sessions left after Close", n)
			}

			// What went over the wire.
			reqs := srv.requests()
			pages := 0
			for i, r := range reqs {
				if r.Authorized != "Bearer "+token {
					t.Errorf("request %d (%s %s): Authorization %q", i, r.Method, r.RPCMethod, r.Authorized)
				}
				if r.RPCMethod == "tools/list" {
					pages++
				}
				if r.RPCMethod == "initialize" {
					if r.SessionID != "" || r.Version != "" {
						t.Errorf("initialize carried session %q version %q", r.SessionID, r.Version)
					}
					continue
				}
				if r.Version != ProtocolVersion {
					t.Errorf("request %d (%s %s): MCP-Protocol-Version %q", i, r.Method, r.RPCMethod, r.Version)
				}
				if !o.Stateless && r.SessionID == "" {
					t.Errorf("request %d (%s %s): no Mcp-Session-Id", i, r.Method, r.RPCMethod)
				}
			}
			if pages != 4 {
				t.Errorf("tools/list went over %d pages, want 4", pages)
			}
			last := reqs[len(reqs)-1]
			if !o.Stateless && last.Method != "DELETE" {
				t.Errorf("last request %s, want DELETE", last.Method)
			}
		})
	}
}

// TestSessionExpired: after the server drops the session, the next request
// gets 404 and reports ErrSessionExpired; a new Initialize recovers.
func TestSessionExpired(t *testing.T) {
	srv := newSDKServer(t, sdkOpts{JSON: true})
	c := NewClient(srv.URL, ClientOptions{})
	defer c.CloseIdleConnections()
	ctx := context.Background()
	s := c.NewSession("")
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	old := s.ID()
	for ss := range srv.MCP.Sessions() {
		ss.Close()
	}
	err := s.Ping(ctx)
	var e *Error
	if !errors.Is(err, ErrSessionExpired) || !errors.As(err, &e) || e.Kind != KindHTTP || e.Status != 404 {
		t.Fatalf("Ping after server dropped the session: %v, want ErrSessionExpired (http 404)", err)
	}
	if err := s.Initialize(ctx); err != nil {
		t.Fatalf("re-Initialize: %v", err)
	}
	if s.ID() == old || s.ID() == "" {
		t.Errorf("new session id %q, old %q", s.ID(), old)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping on new session: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}

	// A 404 on a request without a session id is not an expiry.
	s2 := c.NewSession("")
	err = s2.Ping(ctx) // stateful server, no session: 404? or 400
	if errors.Is(err, ErrSessionExpired) {
		t.Errorf("request without session id reported expiry: %v", err)
	}
}

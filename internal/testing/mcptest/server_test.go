package mcptest

import (
	"net/http"
	"testing"
)

// TestBothImplementations: the one Start serves either implementation
// with what they share — the handshake, the bearer check (401 with the
// token refused), the request recorder and its counts, the sessions.
func TestBothImplementations(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"hand-written", Options{}},
		{"hand-written-sse", Options{SSE: true}},
		{"sdk", Options{SDK: true}},
		{"sdk-sse", Options{SDK: true, SSE: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Authorized = func(tok string) bool { return tok == "good" }
			s, url := start(t, tt.opts)
			init := map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
				"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "rawtest", "version": "0"}}}
			if a := post(t, url, map[string]string{"Authorization": "Bearer bad"}, init); a.status != http.StatusUnauthorized {
				t.Fatalf("bad token: %d %s", a.status, a.raw)
			}
			a := post(t, url, map[string]string{"Authorization": "Bearer good"}, init)
			if a.status != http.StatusOK || a.msg.Result["protocolVersion"] == nil || a.header.Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize: %d %v %s", a.status, a.header, a.raw)
			}
			if s.Count("initialize") != 2 || s.Sessions() != 1 {
				t.Errorf("initialize counted %d, %d sessions; want 2 (one refused) and 1", s.Count("initialize"), s.Sessions())
			}
			reqs := s.Requests()
			if len(reqs) != 2 || reqs[0].Authorized != "Bearer bad" || reqs[1].RPCMethod != "initialize" || reqs[1].Method != http.MethodPost {
				t.Errorf("recorded %+v", reqs)
			}
			if (s.MCP != nil) != tt.opts.SDK {
				t.Errorf("MCP %v with SDK %v", s.MCP, tt.opts.SDK)
			}
		})
	}
}

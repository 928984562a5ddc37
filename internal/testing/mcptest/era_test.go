package mcptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestLegacyOnly: without DualEra the server is today's 2025 server: the
// handshake, a session, echo alone; server/discover is refused as a
// legacy server refuses it (no session: 400; stateless: -32601), and a
// 2026-07-28 request is a request without a session.
func TestLegacyOnly(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		for _, sseOn := range []bool{false, true} {
			t.Run(fmt.Sprintf("stateless=%v/sse=%v", stateless, sseOn), func(t *testing.T) {
				s, url := start(t, Options{Stateless: stateless, SSE: sseOn})
				sid := initialize(t, url)
				if (sid == "") != stateless {
					t.Fatalf("session id %q, stateless %v", sid, stateless)
				}
				a := call2025(t, url, sid, "tools/list", nil)
				if tools := a.msg.Result["tools"].([]any); len(tools) != 1 || a.msg.Result["ttlMs"] != nil {
					t.Fatalf("tools/list %s", a.raw)
				}
				if a := call2025(t, url, sid, "ping", nil); a.msg.Error != nil {
					t.Fatalf("ping %s", a.raw)
				}
				d := call2026(t, url, "server/discover", nil, noCaps)
				if stateless {
					wantError(t, d, http.StatusOK, -32601, "method not found")
				} else if d.status != http.StatusBadRequest || d.msg.Error != nil {
					t.Fatalf("discover without a session: %d %s", d.status, d.raw)
				}
				if s.Count("server/discover") != 1 || s.Count("tools/list") != 1 {
					t.Errorf("counts %d %d", s.Count("server/discover"), s.Count("tools/list"))
				}
			})
		}
	}
}

// TestDualEra: with DualEra both eras are served on one endpoint, per
// request: 2026-07-28 requests need no session and get none, 2025 ones
// keep theirs; server/discover answers either.
func TestDualEra(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		for _, sseOn := range []bool{false, true} {
			t.Run(fmt.Sprintf("stateless=%v/sse=%v", stateless, sseOn), func(t *testing.T) {
				_, url := start(t, Options{DualEra: true, Stateless: stateless, SSE: sseOn, TTL: 90 * time.Second})
				wantCT := "application/json"
				if sseOn {
					wantCT = "text/event-stream"
				}
				d := call2026(t, url, "server/discover", nil, noCaps)
				if d.status != http.StatusOK || d.header.Get("Mcp-Session-Id") != "" || d.header.Get("Content-Type") != wantCT {
					t.Fatalf("discover: %d %v %s", d.status, d.header, d.raw)
				}
				r := d.msg.Result
				vs, _ := json.Marshal(r["supportedVersions"])
				caps, _ := json.Marshal(r["capabilities"])
				if string(vs) != `["2025-03-26","2025-06-18","2025-11-25","2026-07-28"]` || r["resultType"] != "complete" ||
					r["ttlMs"] != float64(90000) || r["cacheScope"] != "public" ||
					string(caps) != `{"extensions":{"io.modelcontextprotocol/tasks":{}},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}` {
					t.Fatalf("discover result %s", d.raw)
				}
				if info := r["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"]; info == nil {
					t.Errorf("no serverInfo in %s", d.raw)
				}

				// 2026: no handshake, no session, a session id sent is ignored.
				params := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
				h := modernHeaders("tools/call", params)
				h["Mcp-Session-Id"] = "bogus"
				a := post(t, url, h, modernBody(2, "tools/call", params, noCaps))
				if a.status != http.StatusOK || text(t, a.msg.Result) != "hi" || a.msg.Result["resultType"] != "complete" || a.header.Get("Mcp-Session-Id") != "" {
					t.Fatalf("2026 tools/call: %d %v %s", a.status, a.header, a.raw)
				}
				for _, m := range []string{"ping", "logging/setLevel", "initialize"} {
					wantError(t, call2026(t, url, m, map[string]any{"level": "info"}, noCaps), http.StatusNotFound, -32601, "does not exist in 2026-07-28")
				}
				wantError(t, call2026(t, url, "no/such", nil, noCaps), http.StatusNotFound, -32601, "method not found")

				// 2025 beside it: the handshake and its session, ping,
				// setLevel; discover without _meta too.
				sid := initialize(t, url)
				if (sid == "") != stateless {
					t.Fatalf("session id %q", sid)
				}
				for _, m := range []string{"ping", "logging/setLevel", "server/discover"} {
					if a := call2025(t, url, sid, m, map[string]any{"level": "info"}); a.status != http.StatusOK || a.msg.Error != nil {
						t.Fatalf("2025 %s: %s", m, a.raw)
					}
				}
				a = call2025(t, url, sid, "tools/list", nil)
				if _, ok := a.msg.Result["resultType"]; ok || len(a.msg.Result["tools"].([]any)) != 3 {
					t.Fatalf("2025 tools/list carries 2026 members or lacks tools: %s", a.raw)
				}
				// 2026-only methods are unknown to the 2025 era.
				for _, m := range []string{"subscriptions/listen", "tasks/get"} {
					wantError(t, call2025(t, url, sid, m, nil), http.StatusOK, -32601, "method not found")
				}
			})
		}
	}
}

// TestValidation2026: the headers must mirror the body (SEP-2243, with
// its base64 encoding), the version must be one the server speaks and
// the _meta members must be there.
func TestValidation2026(t *testing.T) {
	_, url := start(t, Options{DualEra: true})
	params := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	body := modernBody(3, "tools/call", params, noCaps)
	send := func(edit func(h map[string]string)) answer {
		h := modernHeaders("tools/call", params)
		edit(h)
		return post(t, url, h, body)
	}
	wantError(t, send(func(h map[string]string) { h["Mcp-Method"] = "tools/list" }), http.StatusBadRequest, -32020, "Mcp-Method")
	wantError(t, send(func(h map[string]string) { delete(h, "Mcp-Method") }), http.StatusBadRequest, -32020, "Mcp-Method")
	wantError(t, send(func(h map[string]string) { h["Mcp-Name"] = "other" }), http.StatusBadRequest, -32020, `Mcp-Name header value "other"`)
	wantError(t, send(func(h map[string]string) { delete(h, "Mcp-Name") }), http.StatusBadRequest, -32020, "Mcp-Name")
	wantError(t, send(func(h map[string]string) { h["MCP-Protocol-Version"] = "2025-11-25" }), http.StatusBadRequest, -32020, "MCP-Protocol-Version")
	wantError(t, send(func(h map[string]string) { h["Mcp-Name"] = "=?base64?!!!?=" }), http.StatusBadRequest, -32020, "malformed")
	wantError(t, send(func(h map[string]string) {
		h["Mcp-Name"] = "=?base64?" + base64.StdEncoding.EncodeToString([]byte("other")) + "?="
	}), http.StatusBadRequest, -32020, `"other"`)
	if a := send(func(h map[string]string) {
		h["Mcp-Name"] = "=?base64?" + base64.StdEncoding.EncodeToString([]byte("echo")) + "?="
	}); a.status != http.StatusOK || text(t, a.msg.Result) != "x" {
		t.Fatalf("base64 Mcp-Name: %s", a.raw)
	}
	// resources/read mirrors params.uri, encoded when not plain ASCII.
	uri := map[string]any{"uri": "test://doc/2"}
	h := modernHeaders("resources/read", uri)
	h["Mcp-Name"] = "=?base64?" + base64.StdEncoding.EncodeToString([]byte("test://doc/2")) + "?="
	if a := post(t, url, h, modernBody(4, "resources/read", uri, noCaps)); a.status != http.StatusOK {
		t.Fatalf("resources/read: %s", a.raw)
	}
	// Other methods need no Mcp-Name.
	if a := call2026(t, url, "tools/list", nil, noCaps); a.status != http.StatusOK {
		t.Fatalf("tools/list: %s", a.raw)
	}

	// The _meta members.
	wantError(t, post(t, url, modernHeaders("tools/list", nil), modernBody(5, "tools/list", nil, nil)), http.StatusBadRequest, -32602, "clientCapabilities")
	noMeta := map[string]any{"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
	wantError(t, post(t, url, modernHeaders("tools/list", nil), noMeta), http.StatusBadRequest, -32602, "protocolVersion")
	old := modernBody(7, "tools/list", nil, noCaps)
	old["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/protocolVersion"] = "1900-01-01"
	a := post(t, url, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/list"}, old)
	wantError(t, a, http.StatusBadRequest, -32022, "Unsupported protocol version")
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if json.Unmarshal(a.msg.Error.Data, &data) != nil || data.Requested != "1900-01-01" || !slices.Contains(data.Supported, "2026-07-28") {
		t.Fatalf("unsupported version data %s", a.raw)
	}
	// A 2026 notification is accepted.
	if a := post(t, url, modernHeaders("notifications/x", nil), map[string]any{"jsonrpc": "2.0", "method": "notifications/x",
		"params": modernBody(nil, "x", nil, noCaps)["params"]}); a.status != http.StatusAccepted {
		t.Fatalf("notification: %d", a.status)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestClientConformance drives the lean client against the real go-sdk
// server in all four answer modes.
func TestClientConformance(t *testing.T) {
	const token = "tok-conformance"
	for _, mode := range mcptest.Modes {
		t.Run(mode.Name, func(t *testing.T) {
			o := mode.Opts
			o.PageSize, o.ExtraTools = 2, 5 // 8 tools: 4 pages
			srv := mcptest.Start(t, o)
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

			if err := s.ListTools(ctx); err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if err := s.CallTool(ctx, "echo", []byte(`{"text":"hello"}`)); err != nil {
				t.Fatalf("CallTool echo: %v", err)
			}
			err := s.CallTool(ctx, "fail", nil)
			if Classify(err) != KindTool {
				t.Errorf("CallTool fail: err %v (kind %q), want kind %q", err, Classify(err), KindTool)
			}
			if err != nil && !strings.Contains(err.Error(), "failed on purpose") {
				t.Errorf("tool error %q lacks the tool's message", err)
			}

			err = s.CallTool(ctx, "no-such-tool", nil)
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindJSONRPC || e.Code != -32602 {
				t.Errorf("CallTool unknown: err %v, want kind %q code -32602", err, KindJSONRPC)
			}

			if err := s.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}

			if err := s.ListResources(ctx); err != nil {
				t.Errorf("ListResources: %v", err)
			}
			if err := s.ReadResource(ctx, "file:///r1.txt"); err != nil {
				t.Errorf("ReadResource: %v", err)
			}
			if err := s.ReadResource(ctx, "file:///nope.txt"); Classify(err) != KindJSONRPC {
				t.Errorf("ReadResource of an unknown URI: %v, want kind %q", err, KindJSONRPC)
			}
			if err := s.ListPrompts(ctx); err != nil {
				t.Errorf("ListPrompts: %v", err)
			}
			if err := s.GetPrompt(ctx, "greet", []byte(`{"who":"ada"}`)); err != nil {
				t.Errorf("GetPrompt: %v", err)
			}
			if err := s.GetPrompt(ctx, "no-such-prompt", nil); Classify(err) != KindJSONRPC {
				t.Errorf("GetPrompt of an unknown prompt: %v, want kind %q", err, KindJSONRPC)
			}
			if err := s.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
			if n := srv.Sessions(); n != 0 {
				t.Errorf("%d server sessions left after Close", n)
			}

			// What went over the wire.
			reqs := srv.Requests()
			pages := map[string]int{}
			params := map[string]bool{}
			for i, r := range reqs {
				if r.Authorized != "Bearer "+token {
					t.Errorf("request %d (%s %s): Authorization %q", i, r.Method, r.RPCMethod, r.Authorized)
				}
				if strings.HasSuffix(r.RPCMethod, "/list") {
					pages[r.RPCMethod]++
				}
				if r.RPCMethod == "tools/call" || r.RPCMethod == "prompts/get" || r.RPCMethod == "resources/read" {
					params[string(r.Params)] = true
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
			if want := map[string]int{"tools/list": 4, "resources/list": 2, "prompts/list": 2}; !maps.Equal(pages, want) {
				t.Errorf("pages per list method %v, want %v", pages, want)
			}
			for _, p := range []string{`{"name":"echo","arguments":{"text":"hello"}}`, `{"name":"fail"}`,
				`{"name":"greet","arguments":{"who":"ada"}}`, `{"uri":"file:///r1.txt"}`} {
				if !params[p] {
					t.Errorf("no request sent params %s; sent %v", p, params)
				}
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
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
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
	// The same with a target that does answer 404.
	nf := httptest.NewServer(mcptest.Reply(404, "text/plain", "not found"))
	defer nf.Close()
	c404 := NewClient(nf.URL, ClientOptions{})
	defer c404.CloseIdleConnections()
	err = c404.NewSession("").Ping(ctx)
	if !errors.As(err, &e) || e.Status != 404 || errors.Is(err, ErrSessionExpired) {
		t.Errorf("404 to a request without session id: %v; want http 404, not ErrSessionExpired", err)
	}
}

// TestPinnedVersion: a pinned version is asked for, and a server that
// answers another one is refused.
func TestPinnedVersion(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	c := NewClient(srv.URL, ClientOptions{ProtocolVersion: "2025-03-26", Headers: map[string]string{"X-Tenant": "t1"}})
	defer c.CloseIdleConnections()
	ctx := context.Background()
	s := c.NewSession("")
	if err := s.Initialize(ctx); err != nil || s.ProtocolVersion() != "2025-03-26" {
		t.Fatalf("Initialize: %v, version %q", err, s.ProtocolVersion())
	}
	_ = s.Close(ctx)
	for _, r := range srv.Requests() {
		if r.Header.Get("X-Tenant") != "t1" {
			t.Errorf("%s %s without the extra header", r.Method, r.RPCMethod)
		}
	}

	other := httptest.NewServer(mcptest.Reply(200, "application/json",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`))
	defer other.Close()
	c2 := NewClient(other.URL, ClientOptions{ProtocolVersion: "2025-03-26"})
	defer c2.CloseIdleConnections()
	err := c2.NewSession("").Initialize(ctx)
	if Classify(err) != KindProtocol || !strings.Contains(err.Error(), `pins "2025-03-26"`) {
		t.Errorf("pinned version refused by the server: %v", err)
	}
}

// TestAbortAfterIsNotTimeout: a request given up by abortAfter is kind
// "aborted", and the server sees the connection go.
func TestAbortAfterIsNotTimeout(t *testing.T) {
	gone := make(chan struct{}, 1)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
			gone <- struct{}{}
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	c := NewClient(ts.URL, ClientOptions{RequestTimeout: 5 * time.Second})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	s.SetTimeouts(0, 50*time.Millisecond)
	err := s.Ping(context.Background())
	if Classify(err) != KindAborted || !errors.Is(err, errAborted) {
		t.Fatalf("kind %q (%v), want %q", Classify(err), err, KindAborted)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the client leave")
	}
}

// TestQuickResults: the engine's shortcut decoders agree with a full
// decode, whatever the spelling of the keys they look for.
func TestQuickResults(t *testing.T) {
	for _, tt := range []struct {
		data    string
		isError bool
		bad     bool
	}{
		{`{"content":[{"type":"text","text":"ok"}]}`, false, false},
		{`{"content":[],"isError":true}`, true, false},
		{`{"content":[],"ISERROR":true}`, true, false},
		{`{"content":[],"\u0069sError":true}`, true, false},
		{`{"content":[{"type":"text","text":"isError in text"}]}`, false, false},
		{`[1]`, false, true},
		{`"x"`, false, true},
	} {
		var quick toolOutcome
		var full toolOutcome
		qerr := unmarshalResult([]byte(tt.data), &quick)
		ferr := json.Unmarshal([]byte(tt.data), &full)
		if (qerr != nil) != tt.bad || (ferr != nil) != tt.bad || quick.IsError != tt.isError || full.IsError != tt.isError {
			t.Errorf("%s: quick %v %v, full %v %v", tt.data, quick.IsError, qerr, full.IsError, ferr)
		}
		var page listPage
		if err := unmarshalResult([]byte(tt.data), &page); (err != nil) != tt.bad {
			t.Errorf("%s as a page: %v", tt.data, err)
		}
		if err := unmarshalResult([]byte(tt.data), &objectResult{}); (err != nil) != tt.bad {
			t.Errorf("%s as an object: %v", tt.data, err)
		}
	}
	var page listPage
	if err := unmarshalResult([]byte(`{"tools":[],"NextCursor":"c2"}`), &page); err != nil || page.NextCursor != "c2" {
		t.Errorf("page %+v %v", page, err)
	}
}

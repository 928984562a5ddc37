package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// traced returns ctx with a sampled span context of fixed ids.
func traced(ctx context.Context) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	return trace.ContextWithSpanContext(ctx, sc)
}

const wantTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestTraceContext: a request whose context holds a span context carries
// it as the traceparent header and in params._meta, whatever params it
// has; one without carries neither.
func TestTraceContext(t *testing.T) {
	type seen struct {
		header string
		meta   map[string]any
		params map[string]any
	}
	var mu sync.Mutex
	got := map[string]seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			ID     *int64         `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("body %s: %v", raw, err)
		}
		meta, _ := req.Params["_meta"].(map[string]any)
		mu.Lock()
		got[req.Method] = seen{header: r.Header.Get("Traceparent"), meta: meta, params: req.Params}
		mu.Unlock()
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"t","version":"1"}}`
		case "tools/list":
			result = `{"tools":[]}`
		case "tools/call":
			result = `{"content":[]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+itoa(*req.ID)+`,"result":`+result+`}`)
	}))
	defer srv.Close()
	c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	ctx := traced(context.Background())
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CallTool(ctx, "echo", []byte(`{"text":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"initialize", "tools/list", "tools/call"} {
		g := got[m]
		if g.header != wantTraceparent || g.meta["traceparent"] != wantTraceparent {
			t.Errorf("%s: header %q, _meta %v; want traceparent %s in both", m, g.header, g.meta, wantTraceparent)
		}
	}
	if p := got["initialize"].params; p["protocolVersion"] == nil || p["clientInfo"] == nil {
		t.Errorf("initialize lost its params: %v", p)
	}
	if p := got["tools/call"].params; p["name"] != "echo" || p["arguments"] == nil {
		t.Errorf("tools/call lost its params: %v", p)
	}
	if g := got["ping"]; g.header != "" || g.params != nil {
		t.Errorf("untraced ping: header %q, params %v; want neither", g.header, g.params)
	}
	if g := got["notifications/initialized"]; g.header != "" {
		t.Errorf("notification carries traceparent %q", g.header)
	}
}

// TestTraceContextSDK: the go-sdk server accepts the _meta the client
// adds, in every answer mode.
func TestTraceContextSDK(t *testing.T) {
	for _, mode := range mcptest.Modes {
		t.Run(mode.Name, func(t *testing.T) {
			srv := mcptest.Start(t, mode.Opts)
			c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second})
			defer c.CloseIdleConnections()
			s := c.NewSession("tok")
			ctx := traced(context.Background())
			if err := s.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.ListTools(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.CallTool(ctx, "echo", []byte(`{"text":"hello"}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Ping(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestSetTrace: a trace context set on the session is carried, as the
// propagator renders it, by every request until ClearTrace — over the
// context's own — and by none after.
func TestSetTrace(t *testing.T) {
	var mu sync.Mutex
	var headers, metas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Params struct {
				Meta struct {
					Traceparent string `json:"traceparent"`
				} `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		headers, metas = append(headers, r.Header.Get("Traceparent")), append(metas, m.Params.Meta.Traceparent)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+mcptest.IDOf(body)+`,"result":{"content":[]}}`)
	}))
	defer srv.Close()
	c := NewClient(srv.URL, ClientOptions{})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	defer s.CloseConn()
	ctx := context.Background()
	s.SetTrace(trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7})
	other := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}))
	for _, cx := range []context.Context{ctx, other} {
		if err := s.CallTool(cx, "t", nil); err != nil {
			t.Fatal(err)
		}
	}
	s.ClearTrace()
	if err := s.CallTool(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{wantTraceparent, wantTraceparent, ""}
	for i := range want {
		if headers[i] != want[i] || metas[i] != want[i] {
			t.Errorf("request %d: header %q, _meta %q; want %q", i, headers[i], metas[i], want[i])
		}
	}
}

package mcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/internal/h1"
)

const pingOK = `{"jsonrpc":"2.0","id":1,"result":{}}`

func TestErrorKinds(t *testing.T) {
	const token = "s3cret-token-xyz"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		kind    string
		status  int   // for KindHTTP
		code    int64 // for KindJSONRPC
	}{
		{"json ok", mcptest.Reply(200, "application/json", pingOK), "", 0, 0},
		{"sse ok", mcptest.Reply(200, "text/event-stream; charset=utf-8", "event: message\ndata: "+pingOK+"\n\n"), "", 0, 0},
		{"html page", mcptest.Reply(200, "text/html", "<html><body>gateway</body></html>"), KindProtocol, 0, 0},
		{"html as json", mcptest.Reply(200, "application/json", "<html><body>gateway</body></html>"), KindProtocol, 0, 0},
		{"500", mcptest.Reply(500, "text/plain", "internal error"), KindHTTP, 500, 0},
		{"502 html", mcptest.Reply(502, "text/html", "<h1>Bad Gateway</h1>"), KindHTTP, 502, 0},
		{"401 echoing token", mcptest.Reply(401, "text/plain", "bad token "+token), KindHTTP, 401, 0},
		{"garbage sse", mcptest.Reply(200, "text/event-stream", "data: {not json\n\n"), KindProtocol, 0, 0},
		{"sse without response", mcptest.Reply(200, "text/event-stream", "event: ping\ndata: x\n\n: comment\n\n"), KindProtocol, 0, 0},
		{"sse wrong id only", mcptest.Reply(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n"), KindProtocol, 0, 0},
		{"json wrong id", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":7,"result":{}}`), KindProtocol, 0, 0},
		{"json not 2.0", mcptest.Reply(200, "application/json", `{"jsonrpc":"1.0","id":1,"result":{}}`), KindProtocol, 0, 0},
		{"json result and error", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`), KindProtocol, 0, 0},
		{"jsonrpc error", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}`), KindJSONRPC, 0, -32601},
		{"jsonrpc error in sse", mcptest.Reply(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\n data: \"error\":{\"code\":-32000,\"message\":\"busy\"}}\n\n"), KindProtocol, 0, 0},
		{"jsonrpc error multi-line sse", mcptest.Reply(200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"error\":{\"code\":-32000,\"message\":\"busy\"}}\n\n"), KindJSONRPC, 0, -32000},
		{"no content type", mcptest.Reply(200, "", pingOK), KindProtocol, 0, 0},
		{"too large", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("a", MaxBodyBytes)+`"}}`), KindTooLarge, 0, 0},
		{"dropped mid-body", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
			buf.Flush()
			conn.Close()
		}, KindConn, 0, 0},
		{"closed before answer", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}, KindConn, 0, 0},
		// A target echoing the token where the error quotes what it sent.
		{"head echoing token", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			fmt.Fprint(buf, "HTTP/1.1 200 OK\r\n"+r.Header.Get("Authorization")+"\r\n\r\n")
			buf.Flush()
			conn.Close()
		}, KindProtocol, 0, 0},
		{"jsonrpc error cutting token", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"`+strings.Repeat("x", 190)+token+`"}}`), KindJSONRPC, 0, -32000},
		{"500 cutting token", mcptest.Reply(500, "text/plain", strings.Repeat("y", 250)+token), KindHTTP, 500, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.handler)
			defer ts.Close()
			c := NewClient(ts.URL, ClientOptions{RequestTimeout: 5 * time.Second})
			defer c.CloseIdleConnections()
			err := c.NewSession(token).Ping(context.Background())
			if got := Classify(err); got != tt.kind {
				t.Fatalf("kind %q, want %q (err: %v)", got, tt.kind, err)
			}
			if err == nil {
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code {
				t.Errorf("status %d code %d, want %d %d (err: %v)", e.Status, e.Code, tt.status, tt.code, err)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error message leaks the token: %v", err)
			}
			if strings.Contains(err.Error(), token[:6]) {
				t.Errorf("error message leaks the start of a token cut short: %v", err)
			}
			if errors.Is(err, ErrSessionExpired) {
				t.Errorf("no session id was sent, yet ErrSessionExpired: %v", err)
			}
		})
	}
}

// TestTimeoutClosesRequest: when the per-request timeout fires, the error is
// KindTimeout and the server sees the request's context end: the client
// really gave up.
func TestTimeoutClosesRequest(t *testing.T) {
	serverSawCancel := make(chan struct{})
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like any MCP server, read the request first: only then does
		// net/http watch the connection and cancel r.Context() on close.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
			close(serverSawCancel)
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	c := NewClient(ts.URL, ClientOptions{RequestTimeout: 100 * time.Millisecond})
	defer c.CloseIdleConnections()

	start := time.Now()
	err := c.NewSession("").CallTool(context.Background(), "slow", nil)
	if Classify(err) != KindTimeout {
		t.Fatalf("kind %q, want %q (err: %v)", Classify(err), KindTimeout, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("CallTool returned after %s despite a 100ms timeout", d)
	}
	select {
	case <-serverSawCancel:
	case <-time.After(5 * time.Second):
		t.Fatal("server never saw the request's context end")
	}
}

// TestCanceledIsNotTimeout: the run's own context ending is KindCanceled.
func TestCanceledIsNotTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	c := NewClient(ts.URL, ClientOptions{RequestTimeout: 10 * time.Second})
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.NewSession("").Ping(ctx); Classify(err) != KindCanceled {
		t.Fatalf("kind %q, want %q (err: %v)", Classify(err), KindCanceled, err)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := NewClient("http://"+addr+"/mcp", ClientOptions{})
	defer c.CloseIdleConnections()
	err = c.NewSession("").Initialize(context.Background())
	if Classify(err) != KindConnRefused {
		t.Fatalf("kind %q, want %q (err: %v)", Classify(err), KindConnRefused, err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error does not wrap ECONNREFUSED: %v", err)
	}
}

// TestInitializeHandshakeErrors covers the rules of the handshake itself.
func TestInitializeHandshakeErrors(t *testing.T) {
	initResult := func(version string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + version + `","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`
	}
	handshake := func(version string, notifyStatus int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"notifications/initialized"`) {
				w.WriteHeader(notifyStatus)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "sess-1")
			io.WriteString(w, initResult(version))
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		kind    string
	}{
		{"ok", handshake("2025-06-18", 202), ""},
		{"older version ok", handshake("2025-03-26", 202), ""},
		{"unknown version", handshake("1999-01-01", 202), KindProtocol},
		{"notification 200", handshake("2025-06-18", 200), KindProtocol},
		{"notification 400", handshake("2025-06-18", 400), KindHTTP},
		{"result not an object", mcptest.Reply(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":[1]}`), KindProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.handler)
			defer ts.Close()
			c := NewClient(ts.URL, ClientOptions{})
			defer c.CloseIdleConnections()
			err := c.NewSession("").Initialize(context.Background())
			if got := Classify(err); got != tt.kind {
				t.Fatalf("kind %q, want %q (err: %v)", got, tt.kind, err)
			}
		})
	}
}

// TestCloseIgnores405: a stateless server that hands out a session id but
// does not allow DELETE.
func TestCloseIgnores405(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true, Stateless: true})
	var deletes int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes++
		}
		w.Header().Set("Mcp-Session-Id", "fake-session")
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c := NewClient(ts.URL+"/mcp", ClientOptions{})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.ID() != "fake-session" {
		t.Fatalf("session id %q", s.ID())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close on a 405: %v", err)
	}
	if deletes != 1 {
		t.Errorf("%d DELETE requests, want 1", deletes)
	}
}

// TestSessionRedacts: what came from the target loses the session's token,
// whole and where a cut ("…") left only its start.
func TestSessionRedacts(t *testing.T) {
	const tok = "s3cret-token-xyz"
	s := &Session{token: tok}
	m := redact.Mask
	for _, tt := range []struct{ in, want string }{
		{"no secret here…", "no secret here…"},
		{"x " + tok + " y " + tok, "x " + m + " y " + m},
		{"echo " + tok[:9] + "…", "echo " + m + "…"},
		{"a " + tok[:5] + "… and " + tok[:12] + "…", "a " + m + "… and " + m + "…"},
		{"short s3c…", "short s3c…"}, // too short a start to say
		{tok[:8], tok[:8]},           // no cut mark: not a cut token
	} {
		if got := s.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (&Session{}).redact("x…"); got != "x…" {
		t.Errorf("no token: %q", got)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.Canceled, KindCanceled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), KindTimeout},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), KindConnRefused},
		{syscall.ECONNRESET, KindConnReset},
		{syscall.EPIPE, KindConnReset},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nx.invalid", IsNotFound: true}}, KindDNS},
		{&h1.TLSError{Err: errors.New("x509: certificate signed by unknown authority")}, KindTLS},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, KindTLS},
		{io.ErrUnexpectedEOF, KindConn},
		{&net.OpError{Op: "read", Err: errors.New("x")}, KindConn},
		{errors.New("something else"), KindProtocol},
		{fmt.Errorf("ctx: %w", &Error{Kind: KindTool, Op: "tools/call"}), KindTool},
		{&Error{Kind: KindHTTP, Status: 503}, KindHTTP},
	}
	for _, tt := range tests {
		if got := Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestStaleKeepAlive: a keep-alive connection the server closed while it
// sat in the pool is noticed (or the request resent), not reported as a
// failure.
func TestStaleKeepAlive(t *testing.T) {
	// Past the idle time after which the transport looks at a pooled
	// connection's socket before it reuses it (500ms).
	const peekAfterIdle = 600 * time.Millisecond
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(mcptest.CannedMCP(0))
	ts.Config.IdleTimeout = 50 * time.Millisecond
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c := NewClient(ts.URL, ClientOptions{})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	for _, idle := range []time.Duration{0, 10 * time.Millisecond, 200 * time.Millisecond, peekAfterIdle} {
		time.Sleep(idle)
		if err := s.Ping(context.Background()); err != nil {
			t.Fatalf("after %s idle: %v", idle, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (the server closed two idle ones)", n)
	}
}

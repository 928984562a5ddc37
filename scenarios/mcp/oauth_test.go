package mcp

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// tokenServer is an OAuth token endpoint on 127.0.0.1 handing out
// tok-1, tok-2, ... and counting its fetches and its connections.
type tokenServer struct {
	*httptest.Server
	fetches atomic.Int64
	conns   atomic.Int64 // opened
	open    atomic.Int64 // opened and not closed yet
	delay   time.Duration
}

func newTokenServer(t *testing.T, delay time.Duration) *tokenServer {
	ts := &tokenServer{delay: delay}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(ts.serve))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			ts.conns.Add(1)
			ts.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			ts.open.Add(-1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if id, secret, ok := r.BasicAuth(); !ok || id != "cid" || secret != "csecret" || r.PostForm.Get("grant_type") != "client_credentials" {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	time.Sleep(ts.delay)
	n := ts.fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"bearer","expires_in":3600}`, n)
}

func (ts *tokenServer) config() OAuthConfig {
	return OAuthConfig{TokenURL: ts.URL + "/token", ClientID: "cid", ClientSecret: "csecret", PerUser: true}
}

// closeOAuthIdle closes the idle connections of the token requests'
// transport of ts, so that goleak sees none left.
func closeOAuthIdle(ts TokenSource) {
	ts.(*oauthTokens).hc.Transport.(*http.Transport).CloseIdleConnections()
}

// TestOAuthPerUserSharesATransport: per-user tokens (the engine makes a
// token source per user from one OAuthConfig) share one transport: the
// token endpoint sees one connection for users fetching one after
// another, and at most oauthMaxConns for users fetching at once, kept
// idle at most that many — not one per user, each with its goroutines.
func TestOAuthPerUserSharesATransport(t *testing.T) {
	ts := newTokenServer(t, 0)
	cfg := ts.config()
	var last TokenSource
	for i := range 50 {
		last = NewOAuthTokens(cfg)
		tok, err := last.Token(context.Background())
		if err != nil || tok != fmt.Sprintf("tok-%d", i+1) {
			t.Fatalf("user %d: token %q, %v", i, tok, err)
		}
	}
	if n := ts.conns.Load(); n > 1 {
		t.Errorf("50 users fetching one after another opened %d connections to the token endpoint, want 1", n)
	}
	closeOAuthIdle(last)

	busy := newTokenServer(t, 20*time.Millisecond) // slow: the fetches overlap
	cfg = busy.config()
	const users = 200
	var wg sync.WaitGroup
	errs := make([]error, users)
	for i := range users {
		src := NewOAuthTokens(cfg)
		last = src
		wg.Go(func() { _, errs[i] = src.Token(context.Background()) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := busy.conns.Load(); n > oauthMaxConns {
		t.Errorf("%d users fetching at once opened %d connections to the token endpoint, want at most %d", users, n, oauthMaxConns)
	}
	if n := busy.open.Load(); n > oauthMaxConns {
		t.Errorf("%d connections to the token endpoint stay open after the fetches, want at most %d", n, oauthMaxConns)
	}
	closeOAuthIdle(last)
}

// proxyChildEnv marks the child process of TestOAuthTokenProxyFromEnvironment.
const proxyChildEnv = "LEAKBENCH_TEST_OAUTH_PROXY_CHILD"

// TestOAuthTokenProxyFromEnvironment: the token request goes through
// the proxy HTTPS_PROXY names, as every other HTTP client of the
// machine does (a token endpoint outside, behind a corporate proxy). The
// proxy's environment is read once per process (http.ProxyFromEnvironment),
// so the fetch runs in a child process with HTTPS_PROXY set; the token
// endpoint's name (example.com, never resolved) is not a loopback one,
// which ProxyFromEnvironment would not proxy. The proxy, on 127.0.0.1,
// tunnels every CONNECT to the token server, on 127.0.0.1 too.
func TestOAuthTokenProxyFromEnvironment(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		proxyChild(t)
		return
	}
	tokens := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"via-proxy","token_type":"bearer","expires_in":3600}`)
	}))
	defer tokens.Close()
	var mu sync.Mutex
	var tunnels []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		tunnels = append(tunnels, r.Host)
		mu.Unlock()
		up, err := net.DialTimeout("tcp", tokens.Listener.Addr().String(), 5*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		w.WriteHeader(http.StatusOK)
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = brw.Flush()
		go func() { _, _ = io.Copy(up, brw); _ = up.(*net.TCPConn).CloseWrite() }()
		_, _ = io.Copy(conn, up)
	}))
	defer proxy.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tokens.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOAuthTokenProxyFromEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChildEnv+"="+ca, "HTTPS_PROXY="+proxy.URL, "https_proxy="+proxy.URL,
		"NO_PROXY=", "no_proxy=", "HTTP_PROXY=", "http_proxy=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child's fetch: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "TOKEN via-proxy") {
		t.Errorf("the child did not get the token through the proxy:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tunnels) != 1 || tunnels[0] != "example.com:443" {
		t.Errorf("the proxy tunnelled %q, want one CONNECT to example.com:443", tunnels)
	}
}

// proxyChild fetches a token from https://example.com/token, trusting
// the CA in the file proxyChildEnv names, and prints it.
func proxyChild(t *testing.T) {
	pemBytes, err := os.ReadFile(os.Getenv(proxyChildEnv))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no CA in the file")
	}
	src := NewOAuthTokens(OAuthConfig{TokenURL: "https://example.com/token", ClientID: "cid", ClientSecret: "csecret",
		TLS: &tls.Config{RootCAs: roots}})
	defer closeOAuthIdle(src)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tok, err := src.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "TOKEN %s\n", tok)
	_ = w.Flush()
}

// revokingTarget answers every JSON-RPC request with an empty result,
// unless its bearer token was revoked (or all are refused): then 401.
type revokingTarget struct {
	mu       sync.Mutex
	revoked  map[string]bool
	all      bool // refuse every token
	requests atomic.Int64
	refused  atomic.Int64
}

func (rt *revokingTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rt.requests.Add(1)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	rt.mu.Lock()
	refuse := rt.all || rt.revoked[tok]
	rt.mu.Unlock()
	if refuse {
		rt.refused.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "token expired", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, mcptest.IDOf(body))
}

func (rt *revokingTarget) revoke(tok string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.revoked == nil {
		rt.revoked = map[string]bool{}
	}
	rt.revoked[tok] = true
}

// TestOAuth401RefreshesOnce: a target answering 401 to a token (expired
// early, revoked) makes the session fetch one new token and send the
// request once more; only a second 401 counts, as kind auth. Users
// sharing a token source fetch one new token between them, not one each.
// A static token has nothing to refresh: its 401 stays an http failure.
func TestOAuth401RefreshesOnce(t *testing.T) {
	t.Run("revoked once", func(t *testing.T) {
		ts := newTokenServer(t, 0)
		rt := &revokingTarget{}
		target := httptest.NewServer(rt)
		defer target.Close()
		src := NewOAuthTokens(ts.config())
		defer closeOAuthIdle(src)
		c := NewClient(target.URL, ClientOptions{Tokens: src, RequestTimeout: 5 * time.Second})
		defer c.CloseIdleConnections()
		s := c.NewSession("")
		defer s.CloseConn()
		if err := s.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		rt.revoke("tok-1")
		if err := s.Ping(context.Background()); err != nil {
			t.Fatalf("a revoked token: %v (kind %q), want a new token and the ping answered", err, Classify(err))
		}
		if ts.fetches.Load() != 2 || rt.requests.Load() != 3 || rt.refused.Load() != 1 {
			t.Errorf("%d token fetches, %d requests (%d refused); want 2, 3 (1)", ts.fetches.Load(), rt.requests.Load(), rt.refused.Load())
		}
	})
	t.Run("always refused", func(t *testing.T) {
		ts := newTokenServer(t, 0)
		rt := &revokingTarget{all: true}
		target := httptest.NewServer(rt)
		defer target.Close()
		src := NewOAuthTokens(ts.config())
		defer closeOAuthIdle(src)
		c := NewClient(target.URL, ClientOptions{Tokens: src, RequestTimeout: 5 * time.Second})
		defer c.CloseIdleConnections()
		s := c.NewSession("")
		defer s.CloseConn()
		err := s.Ping(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindAuth || e.Status != http.StatusUnauthorized {
			t.Fatalf("401 to a fresh token too: %v (kind %q), want kind %q with status 401", err, Classify(err), KindAuth)
		}
		if ts.fetches.Load() != 2 || rt.requests.Load() != 2 {
			t.Errorf("%d token fetches, %d requests; want 2 and 2 (one refresh, one retry)", ts.fetches.Load(), rt.requests.Load())
		}
	})
	t.Run("shared token revoked", func(t *testing.T) {
		ts := newTokenServer(t, 0)
		rt := &revokingTarget{}
		target := httptest.NewServer(rt)
		defer target.Close()
		src := NewOAuthTokens(ts.config())
		defer closeOAuthIdle(src)
		c := NewClient(target.URL, ClientOptions{Tokens: src, RequestTimeout: 5 * time.Second})
		defer c.CloseIdleConnections()
		if _, err := src.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
		rt.revoke("tok-1")
		const users = 20
		errs := make([]error, users)
		var wg sync.WaitGroup
		for i := range users {
			s := c.NewSession("")
			wg.Go(func() { defer s.CloseConn(); errs[i] = s.Ping(context.Background()) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if n := ts.fetches.Load(); n != 2 {
			t.Errorf("%d users sharing a revoked token made %d token fetches, want 2 (the first and one refresh)", users, n)
		}
	})
	t.Run("static token", func(t *testing.T) {
		rt := &revokingTarget{all: true}
		target := httptest.NewServer(rt)
		defer target.Close()
		c := NewClient(target.URL, ClientOptions{RequestTimeout: 5 * time.Second})
		defer c.CloseIdleConnections()
		s := c.NewSession("static")
		defer s.CloseConn()
		err := s.Ping(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindHTTP || e.Status != http.StatusUnauthorized || rt.requests.Load() != 1 {
			t.Errorf("401 to a static token: %v after %d requests, want kind %q 401 after 1", err, rt.requests.Load(), KindHTTP)
		}
	})
}

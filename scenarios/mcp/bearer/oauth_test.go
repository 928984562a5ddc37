package bearer

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
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// oauthConfig is the client-credentials grant of ts's client, a
// token source per user.
func oauthConfig(ts *mcptest.TokenServer) OAuthConfig {
	return OAuthConfig{TokenURL: ts.URL + "/token", ClientID: mcptest.TokenClientID, ClientSecret: mcptest.TokenClientSecret, PerUser: true}
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
	ts := mcptest.StartTokenServer(t, 0)
	cfg := oauthConfig(ts)
	var last TokenSource
	for i := range 50 {
		last = NewOAuthTokens(cfg)
		tok, err := last.Token(context.Background())
		if err != nil || tok != fmt.Sprintf("tok-%d", i+1) {
			t.Fatalf("user %d: token %q, %v", i, tok, err)
		}
	}
	if n := ts.Conns.Load(); n > 1 {
		t.Errorf("50 users fetching one after another opened %d connections to the token endpoint, want 1", n)
	}
	closeOAuthIdle(last)

	busy := mcptest.StartTokenServer(t, 20*time.Millisecond) // slow: the fetches overlap
	cfg = oauthConfig(busy)
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
	if n := busy.Conns.Load(); n > oauthMaxConns {
		t.Errorf("%d users fetching at once opened %d connections to the token endpoint, want at most %d", users, n, oauthMaxConns)
	}
	if n := busy.Open.Load(); n > oauthMaxConns {
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

package engine

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// serveTestMCP serves the hand-rolled MCP server on loopback.
func serveTestMCP(t *testing.T, opts mcptest.Options) (*mcptest.Server, string) {
	t.Helper()
	s := mcptest.Start(t, opts)
	return s, s.URL
}

const echoPlan = `timeout: 3s
%s
scenarios:
  s:
    executor: constant-vus
    vus: %d
    duration: 400ms
    flow: [tools/list, {tools/call: {name: echo, arguments: {text: hi}}}, ping, think: 20ms]
`

// TestHandRolledServer plays the flow against an MCP server written by
// hand (neither the gateway nor go-sdk), stateful and stateless, JSON and
// SSE answers; with a connection per user the server sees one connection
// per user (and one for the preflight), with connections: {shared: 1}
// far fewer than requests.
func TestHandRolledServer(t *testing.T) {
	checkLeaks(t)
	const users = 4
	for _, stateless := range []bool{false, true} {
		for _, sse := range []bool{false, true} {
			for _, shared := range []bool{false, true} {
				name := fmt.Sprintf("stateless=%v/sse=%v/shared=%v", stateless, sse, shared)
				t.Run(name, func(t *testing.T) {
					srv, url := serveTestMCP(t, mcptest.Options{Stateless: stateless, SSE: sse})
					conns := ""
					if shared {
						conns = "connections: {shared: 1}"
					}
					res, err := RunPlan(context.Background(), mustParse(t, fmt.Sprintf(echoPlan, conns, users)), RunOptions{Target: url})
					if err != nil {
						t.Fatal(err)
					}
					assertRunEnded(t, url)
					serverSees(t, "connections", srv.Open.Load)
					if res.Failures != 0 || res.Requests < 3*users {
						t.Fatalf("requests %d failures %d (%v) %v", res.Requests, res.Failures, res.ErrorsByKind, res.ErrorSamples)
					}
					got := srv.Conns.Load()
					if !shared && got != users+1 {
						t.Errorf("server accepted %d connections, want one per user plus the preflight's (%d)", got, users+1)
					}
					if shared && got > res.Requests/2 {
						t.Errorf("shared pool: %d connections for %d requests", got, res.Requests)
					}
					if !stateless && srv.Closed.Load() < users {
						t.Errorf("%d sessions closed, want %d", srv.Closed.Load(), users)
					}
				})
			}
		}
	}
}

// TestBadTargets: each kind of bad target is one clear error, found by the
// preflight before any load, within seconds.
func TestBadTargets(t *testing.T) {
	checkLeaks(t)
	pl := mustParse(t, "timeout: 2s\nscenarios:\n  s: {executor: constant-vus, vus: 50, duration: 5s, flow: [ping]}\n")
	refused := "http://" + mcptest.RefusedAddr(t) + "/mcp"
	plain, plainURL := serveTestMCP(t, mcptest.Options{})
	_ = plain
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Welcome to staging</body></html>")
	}))
	defer html.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok","items":[1,2,3]}`)
	}))
	defer api.Close()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer forbidden.Close()
	// Accepts connections and never answers (a firewall, a hung service).
	silent, _ := net.Listen("tcp", "127.0.0.1:0")
	defer silent.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	h1.Resolver = nxdomainResolver(t)
	defer func() { h1.Resolver = nil }()
	for _, tt := range []struct {
		name, target, want string
		is                 error
	}{
		{"refused", refused, "connection refused", nil},
		// Resolved by a DNS server of the test's own on loopback that
		// knows no name: a DNS failure that asks no one else.
		{"dns", "http://staging.leakbench.test/mcp", "does not resolve", nil},
		{"tls to a plain port", strings.Replace(plainURL, "http://", "https://", 1), "TLS failed", nil},
		{"html page", html.URL + "/", "is not an MCP server", ErrNotMCP},
		{"json api", api.URL + "/api", "is not an MCP server", ErrNotMCP},
		{"forbidden", forbidden.URL + "/mcp", "refused the credentials", nil},
		{"silent", "http://" + silent.Addr().String() + "/mcp", "no answer to server/discover", nil}, // auto's first request
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := RunPlan(context.Background(), pl, RunOptions{Target: tt.target, RunDir: dir})
			if err == nil || res != nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("%v, want %q", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("not one line: %q", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "load.jsonl")); err == nil {
				t.Errorf("load.jsonl written for a run that never started")
			}
		})
	}
}

// nxdomainResolver is a resolver whose DNS server, on loopback, answers
// every question with NXDOMAIN.
func nxdomainResolver(t *testing.T) *net.Resolver {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n < 12 {
				continue
			}
			q := append([]byte{}, buf[:n]...)
			q[2] = 0x80 | q[2]&0x79 | 0x04 // QR, opcode kept, AA
			q[3] = 0x80 | 3                // RA, RCODE NXDOMAIN
			q[6], q[7], q[8], q[9], q[10], q[11] = 0, 0, 0, 0, 0, 0
			_, _ = pc.WriteTo(q, from)
		}
	}()
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// TestTLSTarget: an https target verifies against the system roots (the
// test server's CA is not among them), a --ca-file, or nothing.
func TestTLSTarget(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{TLS: true})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	pl := mustParse(t, fmt.Sprintf(echoPlan, "", 2))
	if _, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL}); err == nil || !strings.Contains(err.Error(), "TLS failed") || !strings.Contains(err.Error(), "--ca-file") {
		t.Fatalf("system roots: %v", err)
	}
	for _, tt := range []struct {
		ca       string
		insecure bool
	}{{ca, false}, {"", true}} {
		conf, err := mcp.TLSConfig(tt.ca, tt.insecure)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, TLS: conf})
		if err != nil || res.Failures != 0 || res.Requests == 0 {
			t.Fatalf("ca %q insecure %v: %v %+v", tt.ca, tt.insecure, err, res)
		}
	}
}

// tokenEndpoint is an OAuth client-credentials token endpoint on loopback
// that issues short-lived tokens and remembers them.
type tokenEndpoint struct {
	id, secret string
	life       time.Duration
	issued     atomic.Int64
	mu         sync.Mutex
	valid      map[string]time.Time
}

func (te *tokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || id != te.id || secret != te.secret || r.FormValue("grant_type") != "client_credentials" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s"}`, secret) // echoes the secret
		return
	}
	tok := fmt.Sprintf("at-%d-%d", time.Now().UnixNano(), te.issued.Add(1))
	te.mu.Lock()
	te.valid[tok] = time.Now().Add(te.life)
	te.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(te.life.Seconds())})
}

func (te *tokenEndpoint) authorized(tok string) bool {
	te.mu.Lock()
	defer te.mu.Unlock()
	exp, ok := te.valid[tok]
	return ok && time.Now().Before(exp)
}

// TestOAuthClientCredentials: users get tokens from a token endpoint,
// shared or one each, refreshed before they expire (tokens live 1 s, the
// run lasts longer, and the server refuses expired ones); a wrong secret
// is one clear error that does not quote the secret.
func TestOAuthClientCredentials(t *testing.T) {
	checkLeaks(t)
	const users = 3
	for _, perUser := range []bool{false, true} {
		t.Run(fmt.Sprintf("perUser=%v", perUser), func(t *testing.T) {
			te := &tokenEndpoint{id: "lb-client", secret: "s3cret-value", life: time.Second, valid: map[string]time.Time{}}
			ts := httptest.NewServer(te)
			defer ts.Close()
			srv, url := serveTestMCP(t, mcptest.Options{Authorized: te.authorized})
			pl := mustParse(t, fmt.Sprintf(strings.Replace(echoPlan, "400ms", "2500ms", 1), "", users))
			oc := &bearer.OAuthConfig{TokenURL: ts.URL + "/token", ClientID: te.id, ClientSecret: te.secret, PerUser: perUser}
			res, err := RunPlan(context.Background(), pl, RunOptions{Target: url, OAuth: oc})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failures != 0 || srv.Answered.Load() == 0 {
				t.Fatalf("failures %d %v %v", res.Failures, res.ErrorsByKind, res.ErrorSamples)
			}
			min := int64(2) // a refresh happened
			if perUser {
				min = users + 1 // every user (and the preflight) its own
			}
			if n := te.issued.Load(); n < min {
				t.Errorf("%d tokens issued, want at least %d", n, min)
			}
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), "at-") || strings.Contains(string(b), te.secret) {
				t.Errorf("result holds a token or the secret")
			}

			bad := *oc
			bad.ClientSecret = "wrong-secret-value"
			_, err = RunPlan(context.Background(), pl, RunOptions{Target: url, OAuth: &bad})
			if err == nil || !strings.Contains(err.Error(), "cannot get a token") || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "wrong-secret-value") {
				t.Fatalf("bad secret: %v", err)
			}

			// A target that refuses every token, fresh ones too: the
			// token endpoint is not the one to blame.
			_, refusing := serveTestMCP(t, mcptest.Options{Authorized: func(string) bool { return false }})
			_, err = RunPlan(context.Background(), pl, RunOptions{Target: refusing, OAuth: oc})
			if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
				t.Fatalf("a target refusing fresh tokens: %v", err)
			}
		})
	}
}

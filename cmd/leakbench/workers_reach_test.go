package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestRunWorkersOverTLSWithOAuth: run --workers 2 against an https
// service whose CA is given with --ca-file and whose bearer tokens come
// from an OAuth token endpoint: each worker process builds its own TLS
// configuration and fetches its own tokens, every call is answered, and
// the client secret is written nowhere in the run directory.
func TestRunWorkersOverTLSWithOAuth(t *testing.T) {
	t.Parallel() // its own servers and environment
	const id, secret = "lb-workers", "s3cret-for-the-workers"
	var (
		issued atomic.Int64
		mu     sync.Mutex
		valid  = map[string]bool{}
	)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID, gotSecret, ok := r.BasicAuth()
		if !ok || gotID != id || gotSecret != secret || r.FormValue("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		tok := fmt.Sprintf("at-%d", issued.Add(1))
		mu.Lock()
		valid[tok] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()
	srv := mcptest.Start(t, mcptest.Options{TLS: true, Authorized: func(tok string) bool {
		mu.Lock()
		defer mu.Unlock()
		return valid[tok]
	}})
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "s.yaml")
	body := "scenarios:\n  s: {executor: per-vu-iterations, vus: 2, iterations: 3, flow: [{tools/call: {name: echo, arguments: {text: x}}}]}\nthresholds:\n  mcp_reqs: ['count==8']\n  mcp_req_failed: ['rate==0']\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The secret from the environment, as a CI job gives it.
	c := newCLI(os.Stdout, os.Stderr, func(k string) string {
		if k == "LEAKBENCH_OAUTH_CLIENT_SECRET" {
			return secret
		}
		return ""
	})
	out := filepath.Join(dir, "out")
	if err := cmdRun(context.Background(), c, []string{"--target", srv.URL, "--scenario", scen, "--workers", "2", "--out", out,
		"--ca-file", ca, "--oauth-token-url", tokens.URL + "/token", "--oauth-client-id", id}); err != nil {
		t.Fatalf("run --workers 2 over TLS with OAuth: %v", err)
	}
	sum := readWorkersSummary(t, out)
	if sum.EndReason != "completed" || sum.Workers.Count != 2 || !sum.Workers.Complete {
		t.Errorf("summary.json: %+v", sum)
	}
	// Each worker asked for its own token (a token is not handed over).
	if n := issued.Load(); n < 2 {
		t.Errorf("%d tokens issued, want one for each of the 2 workers at least", n)
	}
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the client secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

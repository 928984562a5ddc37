package dashboard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tokenFile(t *testing.T, tok string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStartRefuses: what Start refuses, and that each refusal names its
// reason. None of these addresses is bound: the checks come first.
func TestStartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
		says string
	}{
		{"all interfaces, no token", Config{Addr: "0.0.0.0:5665"}, ErrNotLoopback, "--dashboard-token-file"},
		{"empty host, no token", Config{Addr: ":5665"}, ErrNotLoopback, "loopback"},
		{"a name, not resolved", Config{Addr: "dash.example:5665"}, ErrNotLoopback, "dash.example:5665"},
		{"a private address, no token", Config{Addr: "192.168.1.10:5665"}, ErrNotLoopback, "192.168.1.10"},
		{"short token", Config{Addr: "127.0.0.1:0", TokenFile: tokenFile(t, "short")}, ErrBadToken, "16 or more"},
		{"empty token", Config{Addr: "0.0.0.0:0", TokenFile: tokenFile(t, "")}, ErrBadToken, "0 characters"},
		{"no token file", Config{Addr: "127.0.0.1:0", TokenFile: "/nonexistent/token"}, ErrBadToken, "/nonexistent/token"},
		{"no port", Config{Addr: "127.0.0.1"}, nil, "HOST:PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(context.Background(), tc.cfg)
			if err == nil {
				s.Close()
				t.Fatal("started")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
}

// TestStartAddrInUse: an address something listens on is refused by
// name before any load.
func TestStartAddrInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	s, err := Start(context.Background(), Config{Addr: addr})
	if err == nil {
		s.Close()
		t.Fatal("started on an address in use")
	}
	if !errors.Is(err, ErrAddrInUse) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "--dashboard=ADDR") {
		t.Errorf("error %q: want ErrAddrInUse naming %s and the flag", err, addr)
	}
}

// TestTokenGuardsEveryPath: with a token, nothing is served without it;
// a header, or ?token= once (which sets a cookie), lets the page in.
func TestTokenGuardsEveryPath(t *testing.T) {
	const tok = "0123456789abcdef-token"
	s, _ := startFake(t, Config{TokenFile: tokenFile(t, tok)})
	get := func(path string, hdr http.Header) *http.Response {
		req, _ := http.NewRequest("GET", s.URL()+path, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		return resp
	}
	for _, p := range []string{"", "events", "chart.min.js", "export", "report/report.html", "?token=wrong-token-wrong-token"} {
		if r := get(p, nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /%s without the token: %s", p, r.Status)
		}
	}
	if r := get("", http.Header{"Authorization": {"Bearer " + tok}}); r.StatusCode != 200 {
		t.Errorf("with the bearer token: %s", r.Status)
	}
	r := get("?token="+tok, nil)
	if r.StatusCode != 200 || len(r.Cookies()) != 1 || !r.Cookies()[0].HttpOnly {
		t.Fatalf("?token=: %s, cookies %v", r.Status, r.Cookies())
	}
	ch := stream(t, s.URL()+"events", http.Header{"Cookie": {r.Cookies()[0].String()}})
	next(t, ch, "history")
}

// TestFinishLinksTheReport: at the end a page gets a done event linking
// the report, which is served with its plots, and nothing else of the
// run directory is.
func TestFinishLinksTheReport(t *testing.T) {
	s, _ := startFake(t, Config{})
	dir := t.TempDir()
	for _, f := range []string{"report.html", "latency.svg", "samples.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	s.Finish(dir)
	var done State
	for ev := range ch {
		if ev.name == "done" {
			done = decode[State](t, ev)
			break
		}
	}
	if !done.Done || done.Report != "report/report.html" {
		t.Fatalf("done event %+v", done)
	}
	for path, want := range map[string]int{"report/report.html": 200, "report/latency.svg": 200, "report/samples.jsonl": 404, "report/..%2fetc": 404} {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /%s: %s, want %d", path, resp.Status, want)
		}
	}
	// A page opened after the end gets the history and the end.
	late := stream(t, s.URL()+"events", nil)
	if h := decode[history](t, next(t, late, "history")); len(h.Points) == 0 || !h.State.Done {
		t.Errorf("late history after the end: %d points, done %v", len(h.Points), h.State.Done)
	}
	next(t, late, "done")
}

// TestExportIsSelfContained: the exported page loads nothing: the
// scripts and every point are in it.
func TestExportIsSelfContained(t *testing.T) {
	if bytes.Contains(bytes.ToLower(asset("chart.min.js")), []byte("</script")) {
		t.Fatal("chart.min.js holds </script: it cannot be inlined as it is")
	}
	s, _ := startFake(t, Config{Title: "fixed"})
	s.Finish("")
	f := filepath.Join(t.TempDir(), "dash.html")
	if err := s.ExportFile(f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, bad := range []string{"<script src", `href="http`, `src="http`, "@import", "hunter2"} {
		if strings.Contains(page, bad) {
			t.Errorf("export holds %q", bad)
		}
	}
	for _, want := range []string{"window.LEAKBENCH_EXPORT = {\"points\":[{\"seq\":1,", "Chart.js v3.9.1", `"done":true`} {
		if !strings.Contains(page, want) {
			t.Errorf("export lacks %q", want)
		}
	}
}

// TestLoopbackHostOnly: without a token, a request whose Host is not a
// loopback name — a page that rebound its name to 127.0.0.1 — is refused.
func TestLoopbackHostOnly(t *testing.T) {
	s, _ := startFake(t, Config{})
	for host, want := range map[string]int{"": 200, "localhost:5665": 200, "[::1]": 200, "evil.example:5665": 403, "evil.example": 403} {
		req, _ := http.NewRequest("GET", s.URL(), nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %s, want %d", host, resp.Status, want)
		}
	}
}

package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"slow and flaky", Config{Latency: 2 * time.Second, FailureRate: 0.5}, true},
		{"always fails", Config{FailureRate: 1}, true},
		{"negative latency", Config{Latency: -time.Second}, false},
		{"latency over the limit", Config{Latency: MaxLatency + time.Second}, false},
		{"negative rate", Config{FailureRate: -0.1}, false},
		{"rate above 1", Config{FailureRate: 1.5}, false},
		{"NaN rate", Config{FailureRate: math.NaN()}, false},
		{"negative body timeout", Config{BodyReadTimeout: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			if tc.ok != (err == nil) {
				t.Fatalf("validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
		})
	}
}

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start upstream: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("close upstream: %v", err)
		}
	})
	return s
}

func post(t *testing.T, ctx context.Context, url, body string) (int, map[string]any, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("answer is not JSON: %q", b)
	}
	return resp.StatusCode, out, nil
}

func TestCallLatencyEchoAndAbandon(t *testing.T) {
	// Registered first, so it runs after the upstream's own cleanup.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	const latency = time.Second
	s := start(t, Config{Latency: latency})
	ctx := context.Background()

	begin := time.Now()
	code, out, err := post(t, ctx, s.URL()+"/call", `{"payload":"hi"}`)
	if err != nil || code != http.StatusOK {
		t.Fatalf("call: code %d, err %v", code, err)
	}
	if took := time.Since(begin); took < latency {
		t.Errorf("answered after %s, before the %s latency", took, latency)
	}
	if echo, _ := out["echo"].(map[string]any); echo["payload"] != "hi" || out["latency_ms"] != float64(latency.Milliseconds()) {
		t.Errorf("answer = %v, want the request body echoed and latency_ms %d", out, latency.Milliseconds())
	}

	// A per-call latency overrides the configured one. The answer says
	// which latency was used; the clock only checks that the configured
	// one was not waited out (a bound a loaded machine cannot break).
	begin = time.Now()
	code, out, err = post(t, ctx, s.URL()+"/call?latency_ms=0", `x`)
	if err != nil || code != http.StatusOK {
		t.Fatalf("call with latency_ms=0: code %d, err %v", code, err)
	}
	if out["latency_ms"] != 0.0 || out["echo"] != "x" {
		t.Errorf("latency_ms=0: answer %v, want latency_ms 0 and the body echoed as a string", out)
	}
	if took := time.Since(begin); took >= latency {
		t.Errorf("latency_ms=0 answered after %s, the configured latency", took)
	}
	if code, _, _ := post(t, ctx, s.URL()+"/call?latency_ms=abc", `x`); code != http.StatusBadRequest {
		t.Errorf("latency_ms=abc: code %d, want 400", code)
	}

	// A caller that gives up is counted, and the handler stops waiting.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := post(t, cctx, s.URL()+"/call?latency_ms=5000", `x`); err == nil {
		t.Fatal("a 5 s call returned before the client's 20 ms timeout")
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.Stats().Abandoned == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.Abandoned != 1 || st.Calls != 4 {
		t.Errorf("stats = %+v, want 4 calls, 1 abandoned", st)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestFailureRate(t *testing.T) {
	for _, tc := range []struct {
		rate     float64
		min, max int64 // failures out of 200
	}{
		{0, 0, 0},
		{1, 200, 200},
		{0.25, 25, 75},
	} {
		s := start(t, Config{FailureRate: tc.rate, Seed: 7})
		for i := 0; i < 200; i++ {
			code, out, err := post(t, context.Background(), s.URL()+"/call", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if code == http.StatusServiceUnavailable && out["error"] != "injected failure" {
				t.Fatalf("503 without the injected-failure body: %v", out)
			}
		}
		if f := s.Stats().Failures; f < tc.min || f > tc.max {
			t.Errorf("rate %g: %d failures of 200, want %d to %d", tc.rate, f, tc.min, tc.max)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestHealthzAndMethods(t *testing.T) {
	s := start(t, Config{Latency: 5 * time.Minute})
	resp, err := http.Get(s.URL() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get(s.URL() + "/call")
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /call: %v %v, want 405", resp, err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
}

// TestSlowBodyIsCutOff: a /call whose body never finishes gets 408 after
// the body-read timeout and its connection is closed — no goroutine is left
// waiting for it — while a call that waits out a latency longer than that
// timeout, after its body is in, is still answered.
func TestSlowBodyIsCutOff(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	const bodyTimeout = 200 * time.Millisecond
	s := start(t, Config{BodyReadTimeout: bodyTimeout, IdleTimeout: time.Second})

	conn, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers promise 100 bytes; 10 come, then nothing.
	if _, err := io.WriteString(conn, "POST /call HTTP/1.1\r\nHost: upstream\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"payload\""); err != nil {
		t.Fatal(err)
	}
	// Bounded, so that a server without the timeout fails the test
	// instead of hanging it.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that never finishes: %v", err)
	}
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || err != nil {
		t.Errorf("unfinished body: %d %q (%v), want 408", resp.StatusCode, rest, err)
	}
	if !resp.Close {
		t.Error("the 408 keeps the connection open; want Connection: close")
	}

	code, out, err := post(t, context.Background(), s.URL()+"/call?latency_ms=600", `{"payload":"slow"}`)
	if err != nil || code != http.StatusOK {
		t.Errorf("a call slower than the body-read timeout: %d %v %v, want 200", code, out, err)
	}
	http.DefaultClient.CloseIdleConnections()
}

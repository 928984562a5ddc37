package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// checkLeaks registers, before anything else is cleaned up, a check that
// the test left no goroutine behind; it runs after every other cleanup.
func checkLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func TestRunAgainstSDKServer(t *testing.T) {
	for _, mode := range sdkModes[:2] { // stateful SSE and JSON: sessions, DELETE
		t.Run(mode.name, func(t *testing.T) {
			checkLeaks(t)
			o := mode.opts
			o.ExtraTools = 1 // tool00
			srv := newSDKServer(t, o)
			cfg := Config{
				Target:   srv.URL,
				Users:    20,
				Duration: 2 * time.Second,
				RampUp:   200 * time.Millisecond,
				ThinkMin: 10 * time.Millisecond,
				ThinkMax: 50 * time.Millisecond,
				Tools: []ToolCall{
					{Name: "echo", Arguments: map[string]any{"text": "hi"}, Weight: 3},
					{Name: "tool00"},
				},
				Tokens: []string{"tok-a", "tok-b"},
				Seed:   1,
			}
			var progress bytes.Buffer
			start := time.Now()
			res, err := Run(context.Background(), cfg, &progress)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if took < cfg.Duration || took > cfg.Duration+DefaultRequestTimeout+time.Second {
				t.Errorf("Run took %s for a %s run", took, cfg.Duration)
			}
			if res.Requests == 0 || res.Iterations == 0 {
				t.Fatalf("requests %d iterations %d", res.Requests, res.Iterations)
			}
			if res.Failures != 0 || res.ErrorRate() != 0 {
				t.Errorf("failures %d (%v), samples %q", res.Failures, res.ErrorsByKind, res.ErrorSamples)
			}
			if res.PeakUsers != cfg.Users {
				t.Errorf("peak users %d, want %d", res.PeakUsers, cfg.Users)
			}
			if res.Interrupted || res.Reinits != 0 || res.AbortedUsers != 0 {
				t.Errorf("interrupted %v reinits %d aborted %d", res.Interrupted, res.Reinits, res.AbortedUsers)
			}
			for _, op := range []string{OpInitialize, OpListTools, OpCallTool, "tools/call:echo", "tools/call:tool00", OpAll} {
				if res.Latency[op].Count == 0 {
					t.Errorf("no latency recorded for %q", op)
				}
			}
			if res.Latency[OpInitialize].Count != int64(cfg.Users) {
				t.Errorf("initialize count %d, want %d", res.Latency[OpInitialize].Count, cfg.Users)
			}
			if got := res.Latency[OpAll].Count; got != res.Requests {
				t.Errorf("all count %d, requests %d", got, res.Requests)
			}
			calls := res.Latency[OpCallTool].Count
			if echo, other := res.Latency["tools/call:echo"].Count, res.Latency["tools/call:tool00"].Count; echo+other != calls || echo < other {
				t.Errorf("tools/call %d = echo %d + tool00 %d? (weights 3:1)", calls, echo, other)
			}
			if l := res.Latency[OpAll]; !(l.MinMs <= l.P50Ms && l.P50Ms <= l.P95Ms && l.P95Ms <= l.MaxMs && l.MaxMs > 0) {
				t.Errorf("latency stats out of order: %+v", l)
			}
			if n := srv.sessions(); n != 0 {
				t.Errorf("%d server sessions left: users did not DELETE them", n)
			}
			line := regexp.MustCompile(`^elapsed \d+s/2s users \d+ req/s \d+ errors 0 p95 (\d+(\.\d)?ms|-)$`)
			lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
			if len(lines) == 0 || !line.MatchString(lines[0]) {
				t.Errorf("progress lines %q", lines)
			}
			// Tokens stay out of the result.
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(js, []byte("tok-a")) || res.Config.Tokens != nil {
				t.Errorf("result carries tokens: %s", js)
			}
		})
	}
}

// TestRunStopsOnCancel: every user is stuck in a slow tools/call when the
// run's context is cancelled; Run must abandon them at once, not wait for
// their 10 s request timeout.
func TestRunStopsOnCancel(t *testing.T) {
	checkLeaks(t)
	srv := newSDKServer(t, sdkOpts{})
	cfg := Config{
		Target:         srv.URL,
		Users:          10,
		Duration:       time.Minute,
		RequestTimeout: 10 * time.Second,
		ListToolsEvery: -1,
		Tools:          []ToolCall{{Name: "slow"}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, cfg, nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Run returned %s after start, %s after cancel", took, took-500*time.Millisecond)
	}
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("Run: res %+v, err %v; want an interrupted result and context.Canceled", res, err)
	}
	if res.ErrorsByKind[KindCanceled] != int64(cfg.Users) || res.Failures != 0 {
		t.Errorf("errors %v failures %d: want %d canceled, no failure", res.ErrorsByKind, res.Failures, cfg.Users)
	}
	if res.Latency[OpCallTool].Count != 0 {
		t.Errorf("canceled calls went into the histogram: %+v", res.Latency[OpCallTool])
	}
}

// TestRunLetsInFlightRequestsFinish: at the end of Duration a request in
// flight is not cancelled but runs into its own timeout.
func TestRunLetsInFlightRequestsFinish(t *testing.T) {
	checkLeaks(t)
	srv := newSDKServer(t, sdkOpts{JSON: true})
	cfg := Config{
		Target:         srv.URL,
		Users:          2,
		Duration:       300 * time.Millisecond,
		RequestTimeout: 700 * time.Millisecond,
		ListToolsEvery: -1,
		Tools:          []ToolCall{{Name: "slow"}},
	}
	start := time.Now()
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < cfg.RequestTimeout || took > cfg.RequestTimeout+2*time.Second {
		t.Errorf("Run took %s; want about RequestTimeout (%s)", took, cfg.RequestTimeout)
	}
	if res.ErrorsByKind[KindTimeout] != int64(cfg.Users) || res.ErrorsByKind[KindCanceled] != 0 {
		t.Errorf("errors %v; want %d timeouts, no cancel", res.ErrorsByKind, cfg.Users)
	}
	if res.Failures != int64(cfg.Users) || res.ErrorRate() <= 0 {
		t.Errorf("failures %d rate %v", res.Failures, res.ErrorRate())
	}
}

// TestRunReinitializesExpiredSessions: the server drops idle sessions faster
// than users think, so every request after a think finds its session gone.
func TestRunReinitializesExpiredSessions(t *testing.T) {
	checkLeaks(t)
	srv := newSDKServer(t, sdkOpts{JSON: true, SessionTimeout: 50 * time.Millisecond})
	cfg := Config{
		Target: srv.URL, Users: 2, Duration: time.Second,
		ThinkMin: 150 * time.Millisecond, ThinkMax: 200 * time.Millisecond,
	}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A session lost to a 404 is re-initialized before the user's next
	// request: the 404 of a user's last request may be left unanswered.
	if http := res.ErrorsByKind[KindHTTP]; res.Reinits == 0 || res.Reinits > http || res.Reinits < http-int64(cfg.Users) {
		t.Errorf("reinits %d, http errors %d: want > 0 and at most one per user short of them", res.Reinits, http)
	}
	if got, want := res.Latency[OpInitialize].Count, int64(cfg.Users)+res.Reinits; got != want {
		t.Errorf("initialize count %d, want users + reinits = %d", got, want)
	}
}

// TestRunInitFailuresBounded: a target that never lets users in; each user
// gives up after maxInitAttempts and the run ends early. Error samples
// never carry the bearer token, even when the target echoes it.
func TestRunInitFailuresBounded(t *testing.T) {
	checkLeaks(t)
	const token = "very-secret-bearer"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "unauthorized: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer ts.Close()
	cfg := Config{Target: ts.URL + "/mcp", Users: 3, Duration: 10 * time.Second, Tokens: []string{token}}
	start := time.Now()
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run took %s although every user gave up", took)
	}
	users := int64(cfg.Users)
	if res.AbortedUsers != users || res.InitRetries != users*(maxInitAttempts-1) ||
		res.Requests != users*maxInitAttempts || res.ErrorsByKind[KindHTTP] != res.Requests {
		t.Errorf("aborted %d retries %d requests %d errors %v", res.AbortedUsers, res.InitRetries, res.Requests, res.ErrorsByKind)
	}
	if res.ErrorRate() != 1 {
		t.Errorf("error rate %v, want 1", res.ErrorRate())
	}
	js, _ := json.Marshal(res)
	if len(res.ErrorSamples) == 0 || bytes.Contains(js, []byte(token)) {
		t.Errorf("samples %q; result JSON must not contain the token", res.ErrorSamples)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	res, err := Run(context.Background(), Config{Target: "http://127.0.0.1:1/mcp"}, nil)
	if err == nil || res != nil || !strings.Contains(err.Error(), "users must be > 0") {
		t.Fatalf("Run with 0 users: res %v err %v", res, err)
	}
}

func TestProgressLine(t *testing.T) {
	checkLeaks(t)
	srv := newSDKServer(t, sdkOpts{JSON: true})
	var buf bytes.Buffer
	cfg := Config{Target: srv.URL, Users: 3, Duration: 2500 * time.Millisecond, ThinkMin: 5 * time.Millisecond, ThinkMax: 20 * time.Millisecond}
	if _, err := Run(context.Background(), cfg, &buf); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^elapsed (\d+)s/2.5s users 3 req/s [1-9]\d* errors 0 p95 \d+(\.\d)?ms$`)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) == 0 || len(lines) > 3 {
		t.Fatalf("%d progress lines in 2.5s, want about 2: %q", len(lines), lines)
	}
	prev := 0
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %d: %q", i, l)
			continue
		}
		if sec, _ := strconv.Atoi(m[1]); sec <= prev {
			t.Errorf("line %d: elapsed does not advance: %q", i, lines)
		} else {
			prev = sec
		}
	}
}

// TestErrorSamplesRedactAllTokens: samples are scrubbed of every user's
// token, whatever the error message is.
func TestErrorSamplesRedactAllTokens(t *testing.T) {
	m := newMetrics(2, []string{"token-one", "token-two"})
	for range 3 {
		m.sample(errors.New("echo: Bearer token-two and token-one"))
	}
	m.sample(errors.New(strings.Repeat("x", 1000)))
	if len(m.samples) != 2 {
		t.Fatalf("samples %q: want 2 distinct", m.samples)
	}
	if m.samples[0] != "echo: Bearer [REDACTED] and [REDACTED]" || len(m.samples[1]) > maxSampleLn+len("…") {
		t.Errorf("samples %q", m.samples)
	}
}

// TestRunKeepsRetryingAStrugglingTarget: 503s and timeouts are what a
// service with a leaked pool answers; users back off and keep trying for
// the whole scenario instead of retiring, so the load does not vanish.
func TestRunKeepsRetryingAStrugglingTarget(t *testing.T) {
	checkLeaks(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	cfg := Config{Target: ts.URL + "/mcp", Users: 2, Duration: 4 * time.Second, Tokens: []string{"t"}}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.AbortedUsers != 0 {
		t.Errorf("%d users retired on 503s; want them to keep retrying", res.AbortedUsers)
	}
	// Backoff 100, 200, 400, 800, 1600 ms… within 4 s: at least 5 tries each.
	if res.Requests < int64(cfg.Users)*maxInitAttempts {
		t.Errorf("only %d initialize attempts in 4 s from %d users", res.Requests, cfg.Users)
	}
}

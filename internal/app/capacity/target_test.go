package capacity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// cliff serves the canned MCP endpoint, but fails every tools/call with
// 503 while more than limit users are connected (each user has a
// keep-alive connection of its own): an error-rate cliff above limit
// concurrent users.
type cliff struct {
	next  http.Handler
	limit int64
	open  atomic.Int64
}

func (c *cliff) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if c.open.Load() > c.limit && bytes.Contains(body, []byte(`"tools/call"`)) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return
	}
	c.next.ServeHTTP(w, r)
}

func (c *cliff) connState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		c.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.open.Add(-1)
	}
}

type connStartKey struct{}

// climbing answers slowly on a new connection and faster as it ages
// (20 ms plus a quarter of the time left to 4 s), so a stage's load is
// still climbing at its end.
type climbing struct{ next http.Handler }

func (c *climbing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start, _ := r.Context().Value(connStartKey{}).(time.Time)
	d := 20*time.Millisecond + max(0, 4*time.Second-time.Since(start))/4
	select {
	case <-time.After(d):
	case <-r.Context().Done():
		return
	}
	c.next.ServeHTTP(w, r)
}

const targetPlan = `
timeout: 5s
capacity:
  load: users
  start: 4
  max: 64
  factor: 2
  stage: 4s
  resolution: 1
  max_stages: 8
  error_rate: 0.05
  # The machine the tests run on is shared: its other load makes the
  # generator late now and then, which would (rightly) stop the search as
  # inconclusive. These tests are about the search; the generator's stop
  # is TestGeneratorStopsTheSearch's.
  generator: off
scenarios:
  s:
    executor: constant-vus
    vus: 1
    duration: 4s
    gracefulStop: 1s
    flow:
      - think: {uniform: [100ms, 300ms]}
      - tools/call: {name: echo}
`

func tokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("user-token-%03d", i)
	}
	return out
}

// resolveProfile parses the profile yaml (named name) and resolves its
// capacity: section.
func resolveProfile(t *testing.T, yaml, name string) (profiles.Profile, Spec) {
	t.Helper()
	p, err := profiles.Parse([]byte(yaml), name)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Resolve(p.Capacity, p.Plan)
	if err != nil {
		t.Fatal(err)
	}
	return p, sp
}

// searchTarget searches the handler's capacity with the plan, load only.
func searchTarget(t *testing.T, h http.Handler, yaml string) (*capreport.Summary, string, error) {
	t.Helper()
	return searchTargetWith(t, h, yaml, nil)
}

// searchTargetWith is searchTarget with the stages exported to tel.
func searchTargetWith(t *testing.T, h http.Handler, yaml string, tel runner.Telemetry) (*capreport.Summary, string, error) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if c, ok := h.(*cliff); ok {
		srv.Config.ConnState = c.connState
	}
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connStartKey{}, time.Now())
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p, sp := resolveProfile(t, yaml, "target.yaml")
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{Profile: p, Spec: sp, Target: &fixtures.External{GatewayURL: srv.URL, Tokens: tokens(100)},
		Name: "cliff", Out: out, Log: testLog{t}, Version: "test", Telemetry: tel})
	return sum, out, err
}

// recordedTelemetry records what a search exported: the requests each
// named run ended, and the runs written.
type recordedTelemetry struct {
	mu       sync.Mutex
	requests map[string]int
	written  []string
}

func (r *recordedTelemetry) Spans(run string) engine.SpanSink { return runSink{r, run} }

func (r *recordedTelemetry) RunWritten(_ context.Context, _ string, sum *rundir.Summary, _ string, _ io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, sum.Name)
}

type runSink struct {
	r   *recordedTelemetry
	run string
}

func (s runSink) RequestEnded(*reqindex.Request, string) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.requests[s.run]++
}

// TestCapacityFindsAnErrorRateCliff: a target that fails every call above
// 12 connected users is found at 12, within the resolution of 1 user.
func TestCapacityFindsAnErrorRateCliff(t *testing.T) {
	const limit = 12
	tel := &recordedTelemetry{requests: map[string]int{}}
	sum, out, err := searchTargetWith(t, &cliff{next: mcptest.CannedMCP(0), limit: limit}, targetPlan, tel)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	s := sum.Capacity.Searches[0]
	t.Logf("%s (%d stages)", s.Headline(), len(s.Stages))
	if s.Outcome != capreport.Found || s.Capacity != limit || s.FirstBad != limit+1 || !s.Resolved {
		t.Errorf("outcome %s, capacity %d, first bad %d, resolved %v; want found, %d, %d", s.Outcome, s.Capacity, s.FirstBad, s.Resolved, limit, limit+1)
	}
	if s.Limit != "mcp_req_failed rate<=0.05" || len(s.Stages) > 8 {
		t.Errorf("limit %q after %d stages", s.Limit, len(s.Stages))
	}
	// The cliff is there from the stage's start: the engine's request
	// index times it within the stage's 4 s.
	if at := s.LimitAtSeconds; at == nil || *at < 0 || *at > 4 {
		t.Errorf("the limit's time %v; want one in [0, 4] s read from requests.jsonl (%+v)", at, s.Stages)
	}
	// --otlp-endpoint on capacity: every stage is exported as a run of
	// its own, under its name, its requests as spans.
	if len(tel.written) != len(s.Stages) {
		t.Errorf("%d runs exported (%q) for %d stages", len(tel.written), tel.written, len(s.Stages))
	}
	for _, st := range s.Stages {
		if _, err := os.Stat(filepath.Join(out, st.Dir, "summary.json")); err != nil {
			t.Errorf("stage %d's run directory: %v", st.Index, err)
		}
		name := fmt.Sprintf("cliff stage %d", st.Index)
		if !slices.Contains(tel.written, name) || tel.requests[name] == 0 {
			t.Errorf("stage %d: exported as %q with %d request spans, want the run %q with its requests", st.Index, tel.written, tel.requests[name], name)
		}
	}
	for _, f := range []string{"summary.json", "report.md", "report.html", "junit.xml", "plots/capacity.png", "plots/capacity.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output: %v", err)
		}
	}
}

// TestCapacityStageThatCannotSettle: a target whose throughput is still
// climbing at the end of each stage gives an inconclusive result
// (ErrInconclusive: exit 1), never a capacity it did not measure.
func TestCapacityStageThatCannotSettle(t *testing.T) {
	// 16 users from the start, thinking little: enough requests in each
	// second that the climb (from about 1 s an answer to 20 ms) stands
	// far out of the counting noise, on a loaded machine too.
	plan := strings.Replace(strings.Replace(targetPlan, "start: 4", "start: 16", 1), "think: {uniform: [100ms, 300ms]}", "think: {uniform: [10ms, 30ms]}", 1)
	sum, _, err := searchTarget(t, &climbing{next: mcptest.CannedMCP(0)}, plan)
	if !errors.Is(err, ErrInconclusive) {
		t.Fatalf("search: %v; want ErrInconclusive", err)
	}
	s := sum.Capacity.Searches[0]
	t.Logf("%s", s.Headline())
	// Usually the first stage already climbs; on a loaded machine the
	// climb may show only at a later one. Either way the search stops at
	// the stage that did not settle, and what it reports is only what an
	// earlier stage measured to hold: a lower bound, never a capacity.
	held := 0
	for _, st := range s.Stages[:len(s.Stages)-1] {
		if !st.Held {
			t.Errorf("stage %d (%d users) before the last neither held nor stopped the search: %+v", st.Index, st.Load, st)
		}
		held = max(held, st.Load)
	}
	last := s.Stages[len(s.Stages)-1]
	if s.Outcome != capreport.Inconclusive || s.Capacity != held || !strings.Contains(last.Inconclusive, "still climbing") {
		t.Errorf("outcome %s, capacity %d after %d stages (last: %q); want inconclusive at a stage still climbing, capacity only what earlier stages held (%d)",
			s.Outcome, s.Capacity, len(s.Stages), last.Inconclusive, held)
	}
}

// TestCapacityLimitMatchingNothing: a latency limit on a tool the load
// never calls is an error naming it, not a stage that held.
func TestCapacityLimitMatchingNothing(t *testing.T) {
	yaml := targetPlan + "thresholds:\n  mcp_req_duration{name:no_such_tool}: [\"p(95)<100\"]\n"
	sum, _, err := searchTarget(t, &cliff{next: mcptest.CannedMCP(0), limit: 100}, yaml)
	if !errors.Is(err, ErrSpec) || sum == nil || sum.Capacity.Searches[0].Capacity != 0 {
		t.Fatalf("search: %v; want an ErrSpec naming the limit and no capacity", err)
	}
	t.Log(err)
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// generatorLimitedPlan is a load one busy core cannot keep the schedule
// of: 400 users thinking 5–15 ms between calls to a server in another
// process.
const generatorLimitedPlan = `
timeout: 5s
capacity:
  load: users
  start: 400
  max: 3200
  stage: 4s
  max_stages: 3
  error_rate: 0.05
scenarios:
  s:
    executor: constant-vus
    vus: 1
    duration: 4s
    gracefulStop: 1s
    flow:
      - think: {uniform: [5ms, 15ms]}
      - tools/call: {name: echo}
`

// TestCapacityGeneratorLimitIsNotTheService: a generator limited on
// purpose — the engine held to one core (GOMAXPROCS 1) that it shares
// with busy loops, as on a CI runner whose other jobs take the CPU, the
// server in a process of its own with a core to spare — is reported as
// leakbench's limit: the search stops inconclusive (exit 1) at the first
// stage, the generator saturated, and no capacity or limit is reported
// for the service. (On one free core the engine keeps up with 4,000 users
// against this server: the server is the limit there, rightly so.)
func TestCapacityGeneratorLimitIsNotTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: a starved generator against a server process")
	}
	mcptest.RaiseOpenFiles(t)
	h := mcptest.StartHelper(t, mcptest.HelperCanned)
	p, sp := resolveProfile(t, generatorLimitedPlan, "generator-limited.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var hogs sync.WaitGroup
	defer hogs.Wait()
	defer cancel()
	for range 6 {
		hogs.Go(func() {
			for ctx.Err() == nil {
				spin()
			}
		})
	}
	sum, err := Run(ctx, Options{Profile: p, Spec: sp, Target: &fixtures.External{GatewayURL: h.URL}, Name: "one-core",
		Out: t.TempDir(), Log: testLog{t}, Version: "test"})
	if !errors.Is(err, ErrInconclusive) || sum == nil {
		t.Fatalf("search: %v; want ErrInconclusive", err)
	}
	s := sum.Capacity.Searches[0]
	t.Logf("%s", s.Headline())
	last := s.Stages[len(s.Stages)-1]
	if s.Outcome != capreport.Inconclusive || s.Capacity != 0 || last.Generator != rundir.GeneratorSaturated ||
		!strings.Contains(last.Inconclusive, "leakbench's limit, not the service's") || s.FirstBad != 0 || s.Limit != "" {
		t.Errorf("outcome %s, capacity %d, first bad %d, limit %q; last stage generator %q, %q; want inconclusive at the generator's limit, no capacity, no limit of the service's",
			s.Outcome, s.Capacity, s.FirstBad, s.Limit, last.Generator, last.Inconclusive)
	}
}

// spin burns about a millisecond of CPU.
func spin() {
	x := 1
	for i := range 1_000_000 {
		x = x*31 + i
	}
	spinSink.Store(int64(x))
}

var spinSink atomic.Int64

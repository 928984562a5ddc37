package engine

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestCapturesChecksData plays, against the go-sdk server, a flow whose
// second call sends what the first one's answer held, with per-user data
// and checks that pass and fail.
func TestCapturesChecksData(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.csv"), []byte("email,team\nada@x.org,red\nbob@x.org,blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(`
data: { file: users.csv, mode: unique }
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 3
    flow:
      - tools/call:
          name: echo
          arguments: { text: "{{data.email}}" }
          capture: { who: structuredContent.echo, first: content.0.text }
          check:
            - isError == false
            - structuredContent.echo contains "@x.org"
            - { path: content.0.text, matches: "^[a-z]+@", name: looks like an email }
            - structuredContent.echo == nobody
      - tools/call: { name: echo, arguments: { text: "again {{vars.who}} of {{data.team}}" }, check: ["structuredContent.echo matches ^again"] }
      - tools/call: { name: echo, arguments: { text: "x" }, capture: { none: structuredContent.nothing } }
thresholds:
  checks{check:isError == false}: ["rate==1"]
  checks: ["rate>0.99"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenariofile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	for _, r := range srv.Requests() {
		var a struct {
			Arguments struct{ Text string } `json:"arguments"`
		}
		if r.RPCMethod == "tools/call" {
			_ = json.Unmarshal(r.Params, &a)
			sent[a.Arguments.Text]++
		}
	}
	for _, want := range []string{"ada@x.org", "bob@x.org", "again ada@x.org of red", "again bob@x.org of blue"} {
		if sent[want] != 3 {
			t.Errorf("sent %q %d times, want 3 (all: %v)", want, sent[want], sent)
		}
	}
	if got := res.ErrorsByKind[mcp.KindCapture]; got != 6 {
		t.Errorf("capture errors = %d, want 6 (the third call of each iteration): %q", got, res.ErrorSamples)
	}
	byName := map[string]rundir.CheckResult{}
	for _, c := range res.Checks {
		byName[c.Check] = c
	}
	for name, want := range map[string][2]int64{
		"isError == false":                         {6, 0},
		`structuredContent.echo contains "@x.org"`: {6, 0},
		"looks like an email":                      {6, 0},
		`structuredContent.echo == "nobody"`:       {0, 6},
		`structuredContent.echo matches "^again"`:  {6, 0},
	} {
		c, ok := byName[name]
		if !ok || c.Passes != want[0] || c.Fails != want[1] {
			t.Errorf("check %q = %+v, want %d passes, %d fails (all: %+v)", name, c, want[0], want[1], res.Checks)
		}
	}
	if c := byName[`structuredContent.echo == "nobody"`]; !strings.Contains(c.SampleAnswer, `"echo":`) {
		t.Errorf("failed check's sample answer = %q", c.SampleAnswer)
	}
	if res.Thresholds[0].Pass != true || res.Thresholds[1].Pass != false {
		t.Errorf("thresholds = %+v; want the isError one to pass, the overall rate (24/30) to fail", res.Thresholds)
	}
}

// TestHTTPSteps plays http steps beside MCP ones on one origin: a POST
// whose JSON answer is captured, a GET using it, an unexpected status,
// and thresholds on the http metrics; each carries a trace of its own,
// indexed in requests.jsonl, and load.jsonl counts them apart.
func TestHTTPSteps(t *testing.T) {
	checkLeaks(t)
	var mu sync.Mutex
	var seen []string
	traces := map[string]bool{} // trace ids of the traceparent headers the API saw
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptest.CannedMCP(0))
	mux.HandleFunc("POST /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, "POST "+string(b)+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Team")+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"job":{"id":"j-42","state":"queued"}}`)
	})
	mux.HandleFunc("GET /api/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, "GET "+r.URL.RequestURI())
		mu.Unlock()
		_, _ = io.WriteString(w, `{"state":"done"}`)
	})
	mux.HandleFunc("GET /api/broken", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := strings.Split(r.Header.Get("Traceparent"), "-"); strings.HasPrefix(r.URL.Path, "/api/") && len(tp) == 4 {
			mu.Lock()
			traces[tp[1]] = true
			mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p := mustParse(t, `
tokens: [tok-1]
scenarios:
  s:
    executor: per-vu-iterations
    vus: 1
    iterations: 2
    flow:
      - ping
      - http:
          method: post
          url: /api/jobs
          headers: { X-Team: "team {{user}}" }
          body: { user: "{{user}}", n: 3 }
          expectStatus: 201
          capture: { job: job.id }
          check: ["job.state == queued"]
      - http: { url: "/api/jobs/{{vars.job}}?q=a b", name: get job, check: ["state == done"] }
      - http: /api/broken
thresholds:
  http_req_failed{name:get job}: ["rate==0"]
  http_req_failed: ["rate<0.5"]
  http_reqs{status:503}: ["count==2"]
  http_req_duration{method:POST}: ["p(95)<5000"]
`)
	dir := t.TempDir()
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL + "/mcp", RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	checkHTTPIndexed(t, dir, traces, 6)
	want := []string{`POST {"n":3,"user":0} application/json team 0 Bearer tok-1`, "GET /api/jobs/j-42?q=a%20b"}
	if len(seen) != 4 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("server saw %q, want twice %q", seen, want)
	}
	for _, th := range res.Thresholds {
		if !th.Pass {
			t.Errorf("threshold %s %s failed: observed %v of %d", th.Metric, th.Expression, th.Observed, th.Samples)
		}
	}
	post := res.HTTP["POST /api/jobs"]
	if post.Requests != 2 || post.Failures != 0 || post.Statuses["201"] != 2 || post.Latency.Count != 2 {
		t.Errorf("POST stats = %+v", post)
	}
	if b := res.HTTP["GET /api/broken"]; b.Failures != 2 || b.Statuses["503"] != 2 {
		t.Errorf("broken stats = %+v", b)
	}
	if res.Latency[plan.OpPing].Count != 2 || res.Requests != 2+2*3+1 {
		t.Errorf("ping latency %+v, requests %d: http steps must stay out of MCP latency", res.Latency[plan.OpPing], res.Requests)
	}
}

// checkHTTPIndexed: requests.jsonl has a line for each of the want http
// steps, with the trace id the API saw in its traceparent, and load.jsonl's
// http_requests add up to want.
func checkHTTPIndexed(t *testing.T, dir string, traces map[string]bool, want int) {
	t.Helper()
	reqs := readJSONL[rundir.Request](t, filepath.Join(dir, rundir.RequestsFile))
	n := 0
	for _, r := range reqs {
		if r.Method != "http" {
			continue
		}
		n++
		if !traces[r.TraceID] {
			t.Errorf("requests.jsonl: http step %q has trace %s, which the API never saw in a traceparent (%v)", r.Name, r.TraceID, traces)
		}
	}
	if n != want || len(traces) != want {
		t.Errorf("requests.jsonl has %d http lines, the API saw %d traces; want %d", n, len(traces), want)
	}
	points := readJSONL[rundir.LoadPoint](t, filepath.Join(dir, rundir.LoadFile))
	var sum, failed int64
	var p95 float64
	for _, p := range points {
		sum += p.HTTPRequests
		failed += p.HTTPFailures
		p95 = max(p95, p.HTTPP95Ms)
	}
	if sum != int64(want) || failed != 2 || p95 <= 0 {
		t.Errorf("load.jsonl: http_requests add up to %d, http_failures %d, max http_p95_ms %v; want %d, 2, > 0", sum, failed, p95, want)
	}
}

// readJSONL reads a file of JSON lines of T.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	v, err := jsonl.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

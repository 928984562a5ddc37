package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// TestRequestIndex: every request carries a new W3C traceparent, in the
// header and in params._meta, and requests.jsonl has one line per request
// with that trace id and what came of it.
func TestRequestIndex(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	// The 2025 handshake: auto would probe with server/discover first
	// (era_test.go indexes both eras).
	pl := mustParse(t, `
protocolVersion: negotiate
scenarios:
  s:
    executor: per-vu-iterations
    vus: 3
    iterations: 4
    flow:
      - tools/list
      - choose:
          - {weight: 1, steps: [{tools/call: {name: echo, arguments: {text: "u{{user}}"}}}]}
          - {weight: 1, steps: [{tools/call: {name: slow, abortAfter: 50ms}}]}
`)
	dir := t.TempDir()
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byTrace := map[string]rundir.Request{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r rundir.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		if _, dup := byTrace[r.TraceID]; dup {
			t.Errorf("trace id %s used twice", r.TraceID)
		}
		byTrace[r.TraceID] = r
	}
	if int64(len(byTrace)) != res.Requests {
		t.Errorf("%d lines, %d requests", len(byTrace), res.Requests)
	}
	outcomes := map[string]int{}
	for _, r := range byTrace {
		outcomes[r.Method+" "+r.Name+" "+r.Outcome]++
		if r.Scenario != "s" || r.User < 0 || r.User > 2 || r.Iteration < 0 || r.Iteration > 3 || r.Start.IsZero() {
			t.Errorf("request %+v", r)
		}
		switch r.Method {
		case "initialize":
			if r.Step != -1 {
				t.Errorf("implicit initialize at step %d", r.Step)
			}
		case "tools/list":
			if r.Step != 0 {
				t.Errorf("tools/list at step %d, want 0", r.Step)
			}
		case "tools/call":
			if want := map[string]int{"echo": 2, "slow": 3}[r.Name]; r.Step != want {
				t.Errorf("tools/call %s at step %d, want %d", r.Name, r.Step, want)
			}
		}
	}
	if outcomes["tools/list  ok"] != 12 || outcomes["tools/call slow aborted"] != int(res.Aborted) || outcomes["initialize  ok"] != 3 {
		t.Errorf("outcomes %v (aborted %d)", outcomes, res.Aborted)
	}
	// What the server saw: the same trace ids, header and _meta alike.
	seen, preflight := 0, 0
	for _, r := range srv.Requests() {
		// Notifications are not the engine's requests: the initialized
		// one of the handshake, and the cancellation notice of an aborted
		// call, which carries that call's trace context in its header.
		if r.RPCMethod == "" || strings.HasPrefix(r.RPCMethod, "notifications/") {
			continue
		}
		tp := r.Header.Get("Traceparent")
		m := traceparentRE.FindStringSubmatch(tp)
		if m == nil {
			t.Errorf("%s: traceparent %q", r.RPCMethod, tp)
			continue
		}
		var p struct {
			Meta struct {
				Traceparent string `json:"traceparent"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(r.Params, &p)
		if p.Meta.Traceparent != tp {
			t.Errorf("%s: _meta.traceparent %q, header %q", r.RPCMethod, p.Meta.Traceparent, tp)
		}
		got, ok := byTrace[m[1]]
		switch {
		case !ok && r.RPCMethod == "initialize" && preflight == 0:
			preflight++ // the engine's preflight: traced, not part of the run
		case !ok || got.Method != r.RPCMethod:
			t.Errorf("%s: trace id %s not in the index as that method (%+v)", r.RPCMethod, m[1], got)
		default:
			seen++
		}
	}
	if int64(seen) != res.Requests || preflight != 1 {
		t.Errorf("server saw %d traced requests (and %d preflights), engine sent %d", seen, preflight, res.Requests)
	}
}

// BenchmarkTraceRequest is what the trace context and the request index
// add to one request on the engine's side: a new span context, the
// propagator's traceparent, and the request's line.
func BenchmarkTraceRequest(b *testing.B) {
	pl := &plan.Plan{Target: "http://127.0.0.1:1/mcp", Timeout: plan.Duration(time.Second), Scenarios: []plan.Scenario{{
		Name: "s", Executor: plan.ExecPerVUIterations, VUs: 1, Iterations: 1, MaxDuration: plan.Duration(time.Minute),
		Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo"}},
	}}}
	cp, err := plan.Compile(pl)
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(cp, nil, RunOptions{})
	l, err := openRequestLog(b.TempDir(), e)
	if err != nil {
		b.Fatal(err)
	}
	defer l.close()
	v := newVU(e.runs[0], 0, 0)
	c := &e.runs[0].cs.flow[0]
	var carrier tpCarrier
	b.ReportAllocs()
	for b.Loop() {
		ctx := v.traced(context.Background(), c, "echo")
		propagation.TraceContext{}.Inject(ctx, &carrier) // as package mcp does
		l.add(v, opCallTool, nil)
	}
}

type tpCarrier struct{ tp string }

func (c *tpCarrier) Get(string) string { return c.tp }
func (c *tpCarrier) Set(_, v string)   { c.tp = v }
func (c *tpCarrier) Keys() []string    { return nil }

// BenchmarkRequestIndexMemory plays the request index of a 30-minute run
// at 5,000 requests a second (9 million requests; LEAKBENCH_INDEX_REQUESTS
// to change it) through one user per shard, flushed every 5,000 requests
// as the monitor does once a second, and reports the heap it holds at the
// end beside the file it wrote: memory stays flat whatever the run's
// length.
func BenchmarkRequestIndexMemory(b *testing.B) {
	n := envInt("LEAKBENCH_INDEX_REQUESTS", 9_000_000)
	pl := &plan.Plan{Target: "http://127.0.0.1:1/mcp", Timeout: plan.Duration(time.Second), Scenarios: []plan.Scenario{{
		Name: "s", Executor: plan.ExecPerVUIterations, VUs: 1, Iterations: 1, MaxDuration: plan.Duration(time.Minute),
		Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo"}},
	}}}
	cp, err := plan.Compile(pl)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		e := newEngine(cp, nil, RunOptions{})
		dir := b.TempDir()
		l, err := openRequestLog(dir, e)
		if err != nil {
			b.Fatal(err)
		}
		vus := make([]*vu, len(e.m.shards))
		for i := range vus {
			vus[i] = newVU(e.runs[0], i, 0)
		}
		c := &e.runs[0].cs.flow[0]
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			v := vus[i%len(vus)]
			v.traced(context.Background(), c, "echo")
			l.add(v, opCallTool, nil)
			if i%5000 == 4999 {
				l.flush()
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		l.close()
		st, err := os.Stat(filepath.Join(dir, rundir.RequestsFile))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "requests")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-growth-MB")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-inuse-MB")
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MB")
		b.ReportMetric(float64(st.Size())/float64(n), "bytes/request")
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
)

// TestRunWorkersExportSpans: run --workers 2 --otlp-endpoint sends every
// request the two workers made as a client span, once, with the trace id
// it carried — from the merged request index, as a sharded run's — and
// says so in summary.json, with no warning that spans are left out.
func TestRunWorkersExportSpans(t *testing.T) {
	t.Parallel() // its own server, receiver and files
	srv := mcptest.Start(t, mcptest.Options{})
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	body := "scenarios:\n  s: {executor: per-vu-iterations, vus: 4, iterations: 5, flow: [{tools/call: {name: echo, arguments: {text: x}}}]}\nthresholds:\n  mcp_req_failed: ['rate==0']\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stderr bytes.Buffer
	c := isolatedCLI()
	c.stderr = &stderr
	if err := cmdRun(context.Background(), c, []string{"--target", srv.URL, "--scenario", scen, "--workers", "2", "--out", out, "--otlp-endpoint", rcv.URL}); err != nil {
		t.Fatalf("run --workers 2 --otlp-endpoint: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "not exported") {
		t.Errorf("the run warned that spans are not exported:\n%s", stderr.String())
	}
	calls, traces := 0, map[string]int{}
	for _, s := range rcv.Spans() {
		traces[otlptest.HexID(s.TraceId)]++
		if s.Name == "tools/call echo" {
			calls++
		}
	}
	if calls != 20 {
		t.Errorf("%d tools/call spans at the receiver, want 20 (4 users × 5 iterations, over 2 workers)", calls)
	}
	for id, n := range traces {
		if n != 1 {
			t.Errorf("trace %s exported %d times, want once", id, n)
		}
	}
	var sum struct {
		OTLP struct {
			RequestSpans  int `json:"request_spans"`
			SpansExported int `json:"spans_exported"`
		} `json:"otlp"`
	}
	readSummary(t, out, &sum)
	if sum.OTLP.RequestSpans != len(rcv.Spans()) || sum.OTLP.SpansExported != len(rcv.Spans()) {
		t.Errorf("summary.json otlp %+v, want the %d spans the receiver got", sum.OTLP, len(rcv.Spans()))
	}
}

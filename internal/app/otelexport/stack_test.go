package otelexport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// leakyProfileYAML: the token-scoping leak (#1885) under a short load, with
// a 3 s idle_in_transaction_session_timeout to kill what it leaves.
const leakyProfileYAML = `
stack:
  idle_in_transaction_session_timeout: 3s
  users: 20
  pgbouncer_pool_size: 30
  gateway_pool_size: 30
probe:
  interval: 100ms
  stuck_after: 1s
  drain: 4s
timeout: 5s
scenarios:
  agents:
    executor: constant-vus
    vus: 12
    duration: 5s
    gracefulStop: 2s
    flow:
      - think: { uniform: [100ms, 300ms] }
      - choose:
          - weight: 3
            steps: [{ tools/call: { name: get_team_tools } }]
          - weight: 1
            steps: [{ tools/call: { name: generate_report, arguments: { seconds: 2 }, abortAfter: 900ms } }]
`

// runLeaky plays the leaky profile against commit-in-finally on a local
// stack with x exporting, and returns the run directory and its summary.
func runLeaky(t *testing.T, x *Exporter, log *bytes.Buffer) (string, *rundir.Summary) {
	t.Helper()
	p, err := profiles.Parse([]byte(leakyProfileYAML), "leaky.yaml")
	if err != nil {
		t.Fatalf("parse profile: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := runner.Run(ctx, runner.Options{Profile: p, Variant: "commit-in-finally", Name: "before", Dir: dir,
		Log: log, Version: "test", Env: "local", Telemetry: x})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	// What summary.json says, not only what Run returned.
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var written rundir.Summary
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	if written.OTLP == nil {
		t.Fatalf("summary.json has no otlp section (Run's: %+v)", sum.OTLP)
	}
	return dir, &written
}

// requestLines counts requests.jsonl's lines.
func requestLines(t *testing.T, dir string) int {
	f, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

// TestStackStuckSessionInTrace: a real short run of the leaky gateway on
// the local stack (PostgreSQL, PgBouncer), exported to a receiver on
// 127.0.0.1: every request is a client span, and a stuck session the
// timeout killed is a span in the trace of the request that left it, the
// child of that request's span, with the database conventions' attributes
// and status error; summary.json's otlp says all was delivered.
func TestStackStuckSessionInTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: a local stack under load")
	}
	clearOTelEnv(t)
	rcv := otlptest.Start(t)
	x, err := Start(context.Background(), Config{Endpoint: rcv.URL, SampleRatio: 1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Shutdown(context.Background())
	var log bytes.Buffer
	dir, sum := runLeaky(t, x, &log)
	o := sum.OTLP
	t.Logf("otlp: %+v", *o)
	if o.RequestSpans == 0 || o.EpisodeSpans == 0 || o.SpansDropped != 0 || o.SpansExported != o.RequestSpans+o.EpisodeSpans || !o.MetricsExported {
		t.Errorf("otlp section %+v: want request and episode spans, all delivered, metrics sent", *o)
	}
	if n := requestLines(t, dir); int64(n) != o.RequestSpans {
		t.Errorf("%d request spans, requests.jsonl has %d requests", o.RequestSpans, n)
	}
	if !strings.Contains(log.String(), "[before] otlp: ") {
		t.Errorf("no otlp line in the log:\n%s", log.String())
	}
	reqs := map[string]*tracepb.Span{} // by trace id
	var stuck []*tracepb.Span
	for _, s := range rcv.Spans() {
		a := otlptest.Attrs(s.Attributes)
		switch {
		case a["mcp.method.name"] != nil:
			reqs[otlptest.HexID(s.TraceId)] = s
		case a["leakbench.stuck"].GetBoolValue() && a["leakbench.joined_by"].GetStringValue() == rundir.JoinedByTrace:
			stuck = append(stuck, s)
		}
	}
	if int64(len(reqs)) != o.RequestSpans {
		t.Errorf("%d request spans arrived (distinct traces), summary says %d", len(reqs), o.RequestSpans)
	}
	if len(stuck) == 0 || sum.Forensics == nil || sum.Forensics.Leaked == 0 {
		t.Fatalf("no stuck episode joined by trace context arrived (%d spans; forensics %+v)", len(rcv.Spans()), sum.Forensics)
	}
	leaked := 0
	for _, s := range stuck {
		a := otlptest.Attrs(s.Attributes)
		req := reqs[otlptest.HexID(s.TraceId)]
		if req == nil {
			t.Errorf("stuck episode %q in trace %x: no request span of that trace", s.Name, s.TraceId)
			continue
		}
		if !bytes.Equal(s.ParentSpanId, req.SpanId) {
			t.Errorf("stuck episode in trace %x: parent %x, want its request's span %x (%s)", s.TraceId, s.ParentSpanId, req.SpanId, req.Name)
		}
		if a["db.system.name"].GetStringValue() != "postgresql" || a["db.namespace"].GetStringValue() != sum.Environment.Database ||
			a["db.query.text"].GetStringValue() == "" || a["server.address"].GetStringValue() == "" || a["leakbench.hold_seconds"].GetDoubleValue() < 1 ||
			a["leakbench.pattern"].GetStringValue() != "commit-in-finally" {
			t.Errorf("stuck episode attributes: %v", a)
		}
		if a["leakbench.end_reason"].GetStringValue() == rundir.EndTimeout {
			leaked++
			if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("an episode the timeout killed has status %v, want error", s.Status)
			}
		}
	}
	if leaked == 0 {
		t.Errorf("none of the %d stuck episodes was killed by the timeout", len(stuck))
	}
	t.Logf("%d request spans, %d stuck episodes in their requests' traces (%d killed by the timeout); e.g. %q under %q",
		len(reqs), len(stuck), leaked, stuck[0].Name, reqs[otlptest.HexID(stuck[0].TraceId)].Name)
	if ms := rcv.Metrics(); ms[MetricLeaked] == nil || ms[MetricStuckMax] == nil || ms[MetricRequests] == nil {
		t.Errorf("gauges missing: %v", ms)
	}
}

// TestStackCollectorDown: the same run with the collector's port closed
// completes, with every span counted as dropped in summary.json and the
// log.
func TestStackCollectorDown(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: a local stack under load")
	}
	clearOTelEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var log bytes.Buffer
	x, err := Start(context.Background(), Config{Endpoint: "http://" + addr, SampleRatio: 1, Version: "test", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Shutdown(context.Background())
	start := time.Now()
	_, sum := runLeaky(t, x, &log)
	o := sum.OTLP
	t.Logf("run took %s; otlp: %+v", time.Since(start).Round(time.Second), *o)
	if sum.EndReason != rundir.EndCompleted || sum.Load == nil || sum.Load.Requests == 0 {
		t.Errorf("run end %q: want completed with its load", sum.EndReason)
	}
	if o.SpansExported != 0 || o.SpansDropped != o.RequestSpans+o.EpisodeSpans || o.SpansDropped == 0 || o.MetricsExported || !strings.Contains(o.Error, "connection refused") {
		t.Errorf("otlp section %+v: want every span dropped, the reason, no metrics", *o)
	}
	if !strings.Contains(log.String(), "spans dropped") || strings.Count(log.String(), "otlp: export failing") != 1 {
		t.Errorf("the log should say once that export fails and then count the dropped spans:\n%s", log.String())
	}
}

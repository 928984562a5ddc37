package otelexport

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
)

func mustHex(t *testing.T, s string, n int) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != n {
		t.Fatalf("bad id %q", s)
	}
	return b
}

func writeLines(t *testing.T, path string, vs ...any) {
	t.Helper()
	var b bytes.Buffer
	for _, v := range vs {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExportRun: a run's requests (through the engine's sink) and its
// episodes (from its directory) reach a real OTLP/HTTP receiver, decoded
// with the official protobuf types: each request a client span with the
// very ids its traceparent carried; the episode joined by trace context a
// child of its request's span in the request's trace, by the database
// conventions, status error for the leak; the one joined by a bearer token
// a trace of its own linked to its request's span; a short healthy episode
// not stuck; the key figures as gauges; summary.json's otlp counts them.
func TestExportRun(t *testing.T) {
	rcv := otlptest.Start(t)
	ctx := context.Background()
	x, err := Start(ctx, Config{Endpoint: rcv.URL, SampleRatio: 1, Version: "test"})
	if err != nil || x == nil {
		t.Fatalf("start: %v, %v", x, err)
	}
	defer x.Shutdown(ctx)

	sum, logLine, t0 := exportedRun(t, x)

	o := sum.OTLP
	if o == nil {
		t.Fatalf("no otlp section; log: %s", logLine)
	}
	if o.RequestSpans != 3 || o.EpisodeSpans != 3 || o.SpansExported != 6 || o.SpansDropped != 0 || !o.MetricsExported || o.Error != "" {
		t.Errorf("otlp section %+v, want 3 request and 3 episode spans, all delivered, metrics sent", *o)
	}
	if !strings.Contains(logLine, "[before] otlp: 6 of 6 spans delivered to "+rcv.URL+"/v1/traces") {
		t.Errorf("log line: %q", logLine)
	}

	byName := map[string][]*tracepb.Span{}
	for _, s := range rcv.Spans() {
		byName[s.Name] = append(byName[s.Name], s)
	}
	one := func(name string) *tracepb.Span {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans named %q, want 1 (spans: %v)", len(byName[name]), name, byName)
		}
		return byName[name][0]
	}
	req := one("tools/call get_team_tools")
	if otlptest.HexID(req.TraceId) != traced || otlptest.HexID(req.SpanId) != span1 || len(req.ParentSpanId) != 0 || req.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("request span: trace %x span %x parent %x kind %v; want the ids its traceparent carried, a root client span", req.TraceId, req.SpanId, req.ParentSpanId, req.Kind)
	}
	a := otlptest.Attrs(req.Attributes)
	if a["mcp.method.name"].GetStringValue() != "tools/call" || a["gen_ai.tool.name"].GetStringValue() != "get_team_tools" ||
		a["leakbench.user"].GetIntValue() != 1 || a["leakbench.iteration"].GetIntValue() != 3 || a["leakbench.outcome"] != nil ||
		a["leakbench.run"].GetStringValue() != "before" || a["leakbench.scenario"].GetStringValue() != "agents" {
		t.Errorf("request span attributes: %v", a)
	}
	if got := time.Duration(req.EndTimeUnixNano - req.StartTimeUnixNano); req.StartTimeUnixNano != uint64(t0.UnixNano()) || got != 40*time.Millisecond {
		t.Errorf("request span from %d lasting %s, want the request's start and 40ms", req.StartTimeUnixNano, got)
	}
	failed := one("initialize")
	if fa := otlptest.Attrs(failed.Attributes); failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || fa["error.type"].GetStringValue() != "http_5xx" ||
		fa["leakbench.outcome"].GetStringValue() != rundir.RequestFailed || fa["leakbench.user"].GetIntValue() == 0 {
		t.Errorf("failed request: status %v, attributes %v; want error, error.type http_5xx, leakbench.outcome failed", failed.Status, fa)
	}

	leak := one("idle in transaction after SELECT")
	if otlptest.HexID(leak.TraceId) != traced || otlptest.HexID(leak.ParentSpanId) != span1 {
		t.Errorf("leaked episode: trace %x parent %x, want in the request's trace %s under its span %s", leak.TraceId, leak.ParentSpanId, traced, span1)
	}
	a = otlptest.Attrs(leak.Attributes)
	for k, want := range map[string]string{"db.system.name": "postgresql", "db.namespace": "leakbench", "db.query.text": leakedQuery, "db.operation.name": "SELECT",
		"server.address": "127.0.0.1", "leakbench.end_reason": "timeout", "leakbench.pattern": "commit-in-finally", "leakbench.joined_by": rundir.JoinedByTrace,
		"leakbench.culprit": "SELECT team_id FROM tokens WHERE token = ?"} {
		if got := a[k].GetStringValue(); got != want {
			t.Errorf("leaked episode %s = %q, want %q", k, got, want)
		}
	}
	if a["leakbench.hold_seconds"].GetDoubleValue() != 5 || !a["leakbench.stuck"].GetBoolValue() || !a["leakbench.leaked"].GetBoolValue() || a["server.port"].GetIntValue() != 5432 {
		t.Errorf("leaked episode attributes: %v", a)
	}
	if leak.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || leak.StartTimeUnixNano != uint64(t0.Add(20*time.Millisecond).UnixNano()) ||
		leak.EndTimeUnixNano != uint64(t0.Add(5020*time.Millisecond).UnixNano()) {
		t.Errorf("leaked episode: status %v, %d–%d; want error over the episode's span", leak.Status, leak.StartTimeUnixNano, leak.EndTimeUnixNano)
	}

	held := one("idle in transaction after UPDATE")
	if otlptest.HexID(held.TraceId) == tokTr || len(held.ParentSpanId) != 0 || len(held.Links) != 1 {
		t.Fatalf("token-joined episode: trace %x parent %x, %d links; want a trace of its own with one link", held.TraceId, held.ParentSpanId, len(held.Links))
	}
	if l := held.Links[0]; otlptest.HexID(l.TraceId) != tokTr || otlptest.HexID(l.SpanId) != tokSp || otlptest.Attrs(l.Attributes)["leakbench.joined_by"].GetStringValue() != rundir.JoinedByToken {
		t.Errorf("token-joined episode's link: %x/%x %v, want the request's span %s/%s joined by %q", l.TraceId, l.SpanId, otlptest.Attrs(l.Attributes), tokTr, tokSp, rundir.JoinedByToken)
	}
	if held.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR || otlptest.Attrs(held.Attributes)["leakbench.leaked"].GetBoolValue() {
		t.Errorf("a session the service released late is held, not leaked: status %v", held.Status)
	}
	healthy := one("idle in transaction after COMMIT")
	if otlptest.Attrs(healthy.Attributes)["leakbench.stuck"].GetBoolValue() || healthy.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a 2 ms episode is neither stuck nor an error: %v", otlptest.Attrs(healthy.Attributes))
	}

	ms := rcv.Metrics()
	for name, want := range map[string]float64{MetricStuckMax: 2, MetricLeaked: 1, MetricReleaseP99: 4.5, MetricErrorRate: 1.0 / 3, MetricRequests: 3} {
		m := ms[name]
		if m == nil || len(m.GetGauge().GetDataPoints()) != 1 {
			t.Errorf("gauge %s: %v, want one data point", name, m)
			continue
		}
		dp := m.GetGauge().GetDataPoints()[0]
		if dp.GetAsDouble() != want || otlptest.Attrs(dp.Attributes)["leakbench.run"].GetStringValue() != "before" {
			t.Errorf("gauge %s = %v %v, want %v for run before", name, dp.GetAsDouble(), otlptest.Attrs(dp.Attributes), want)
		}
	}
}

// The ids of exportedRun's requests, in their traceparents.
const (
	traced = "4bf92f3577b34da6a3ce929d0e0e4736"
	span1  = "00f067aa0ba902b7"
	tokTr  = "0af7651916cd43dd8448eb211c80319c"
	tokSp  = "b7ad6b7169203331"
	failTr = "11111111111111111111111111111111"
	failSp = "2222222222222222"
	// leakedQuery is the leaked episode's query, its sqlcommenter
	// traceparent naming the first request.
	leakedQuery = "SELECT team_id FROM tokens WHERE token = $1 /*application='mcp-gateway',traceparent='00-" + traced + "-" + span1 + "-01'*/"
)

// exportedRun feeds x the run both export tests check: three requests
// through the sink as they end (one failed), and a run directory with two
// of them and three episodes — one leaked and joined by trace context, one
// joined by a bearer token, one short and healthy — then writes the run to
// x and returns its summary (with the otlp section), the log line, and
// the time the run began.
func exportedRun(t *testing.T, x *Exporter) (*rundir.Summary, string, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	reqs := []reqindex.Request{
		{User: 1, Iteration: 3, Step: 2, Method: "tools/call", Name: "get_team_tools", Start: t0, Took: 40 * time.Millisecond, Outcome: rundir.RequestOK},
		{User: 2, Iteration: 1, Step: 0, Method: "tools/call", Name: "generate_report", Start: t0.Add(time.Second), Took: 900 * time.Millisecond, Outcome: rundir.RequestOK},
		{User: 3, Iteration: 0, Step: -1, Method: "initialize", Start: t0, Took: 5 * time.Millisecond, Outcome: rundir.RequestFailed, Kind: "http_5xx"},
	}
	copy(reqs[0].Trace[:], mustHex(t, traced, 16))
	copy(reqs[0].Span[:], mustHex(t, span1, 8))
	copy(reqs[1].Trace[:], mustHex(t, tokTr, 16))
	copy(reqs[1].Span[:], mustHex(t, tokSp, 8))
	copy(reqs[2].Trace[:], mustHex(t, failTr, 16))
	copy(reqs[2].Span[:], mustHex(t, failSp, 8))
	sink := x.Spans("before")
	for i := range reqs {
		sink.RequestEnded(&reqs[i], "agents")
	}

	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, rundir.RequestsFile),
		rundir.Request{TraceID: traced, SpanID: span1, User: 1, Scenario: "agents", Iteration: 3, Step: 2, Method: "tools/call", Name: "get_team_tools", Start: t0, Seconds: 0.04, Outcome: rundir.RequestOK},
		rundir.Request{TraceID: tokTr, SpanID: tokSp, User: 2, Scenario: "agents", Iteration: 1, Method: "tools/call", Name: "generate_report", Start: t0.Add(time.Second), Seconds: 0.9, Outcome: rundir.RequestOK})
	writeLines(t, filepath.Join(dir, rundir.EpisodesFile),
		rundir.Episode{PID: 101, Start: t0.Add(20 * time.Millisecond), End: t0.Add(5020 * time.Millisecond), HoldSeconds: 5, EndReason: rundir.EndTimeout,
			Query: leakedQuery, Fingerprint: "SELECT team_id FROM tokens WHERE token = ?", ApplicationName: "mcp-gateway", TraceID: traced, SpanID: span1},
		rundir.Episode{PID: 102, Start: t0.Add(1500 * time.Millisecond), End: t0.Add(4500 * time.Millisecond), HoldSeconds: 3, EndReason: rundir.EndReleased,
			Query: "UPDATE usage SET n = n + ?", SentBy: &rundir.SentBy{Token: 2, Tokens: 10}},
		rundir.Episode{PID: 103, Start: t0, End: t0.Add(2 * time.Millisecond), HoldSeconds: 0.002, EndReason: rundir.EndReleased, Query: "COMMIT"})

	sum := &rundir.Summary{Name: "before", Profile: "ci",
		Environment: rundir.Environment{Database: "leakbench", Variant: "commit-in-finally"},
		Forensics:   &rundir.Forensics{StuckAfterSeconds: 1, Leaked: 1},
		Probe:       &rundir.ProbeSummary{MaxStuckIdleInTx: 2, ReleaseP99Seconds: 4.5, TimeoutTerminated: 1},
		Load:        &rundir.LoadResult{Requests: 3, Failures: 1}}
	var log bytes.Buffer
	x.RunWritten(context.Background(), dir, sum, "127.0.0.1:5432", &log)
	return sum, log.String(), t0
}

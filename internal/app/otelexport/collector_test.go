package otelexport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// collectorDir is the minimal Collector distribution the test builds: its
// own module, so that the Collector's dependencies stay out of ours.
const collectorDir = "../../../tools/otelcol"

// TestExportToRealCollector: what TestExportRun sends to the in-process
// receiver, sent to the real OpenTelemetry Collector (tools/otelcol: its
// OTLP receiver, the contrib file exporter) and read back from the file it
// writes: the request span with the very ids its traceparent carried, the
// leaked episode a child of it in its trace by the database conventions,
// status error; the gauges through the Collector's metrics pipeline.
func TestExportToRealCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the OpenTelemetry Collector (tools/otelcol): minutes on a cold build cache")
	}
	col := startCollector(t)
	ctx := context.Background()
	x, err := Start(ctx, Config{Endpoint: col.URL, SampleRatio: 1, Version: "test"})
	if err != nil || x == nil {
		t.Fatalf("start: %v, %v", x, err)
	}

	sum, logLine, t0 := exportedRun(t, x)
	if err := x.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}

	o := sum.OTLP
	if o == nil {
		t.Fatalf("no otlp section; log: %s", logLine)
	}
	if o.RequestSpans != 3 || o.EpisodeSpans != 3 || o.SpansExported != 6 || o.SpansDropped != 0 || !o.MetricsExported || o.Error != "" {
		t.Errorf("otlp section %+v, want 3 request and 3 episode spans, all delivered, metrics sent", *o)
	}
	if !strings.Contains(logLine, "[before] otlp: 6 of 6 spans delivered to "+col.URL+"/v1/traces") {
		t.Errorf("log line: %q", logLine)
	}

	spans := col.spans(t, 6)
	byName := map[string][]jsonSpan{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	one := func(name string) jsonSpan {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans named %q in the Collector's file, want 1 (spans: %+v)", len(byName[name]), name, byName)
		}
		return byName[name][0]
	}

	req := one("tools/call get_team_tools")
	if req.TraceID != traced || req.SpanID != span1 || req.ParentSpanID != "" || req.Kind != spanKindClient {
		t.Errorf("request span: trace %q span %q parent %q kind %d; want the ids its traceparent carried, a root client span", req.TraceID, req.SpanID, req.ParentSpanID, req.Kind)
	}
	a := req.attrs()
	if a["mcp.method.name"].str() != "tools/call" || a["gen_ai.tool.name"].str() != "get_team_tools" ||
		a["leakbench.user"].int() != 1 || a["leakbench.iteration"].int() != 3 || a["leakbench.outcome"] != nil ||
		a["leakbench.run"].str() != "before" || a["leakbench.scenario"].str() != "agents" {
		t.Errorf("request span attributes: %v", a)
	}
	if start, end := req.StartTimeUnixNano.uint(), req.EndTimeUnixNano.uint(); start != uint64(t0.UnixNano()) || time.Duration(end-start) != 40*time.Millisecond {
		t.Errorf("request span from %d lasting %s, want the request's start and 40ms", start, time.Duration(end-start))
	}

	leak := one("idle in transaction after SELECT")
	if leak.TraceID != traced || leak.ParentSpanID != span1 {
		t.Errorf("leaked episode: trace %q parent %q, want in the request's trace %s under its span %s", leak.TraceID, leak.ParentSpanID, traced, span1)
	}
	a = leak.attrs()
	for k, want := range map[string]string{"db.system.name": "postgresql", "db.namespace": "leakbench", "db.query.text": leakedQuery, "db.operation.name": "SELECT",
		"server.address": "127.0.0.1", "leakbench.end_reason": "timeout", "leakbench.pattern": "commit-in-finally", "leakbench.joined_by": rundir.JoinedByTrace,
		"leakbench.culprit": "SELECT team_id FROM tokens WHERE token = ?"} {
		if got := a[k].str(); got != want {
			t.Errorf("leaked episode %s = %q, want %q", k, got, want)
		}
	}
	if a["leakbench.hold_seconds"].double() != 5 || !a["leakbench.stuck"].bool() || !a["leakbench.leaked"].bool() || a["server.port"].int() != 5432 {
		t.Errorf("leaked episode attributes: %v", a)
	}
	if leak.Status.Code != statusCodeError || leak.StartTimeUnixNano.uint() != uint64(t0.Add(20*time.Millisecond).UnixNano()) ||
		leak.EndTimeUnixNano.uint() != uint64(t0.Add(5020*time.Millisecond).UnixNano()) {
		t.Errorf("leaked episode: status %+v, %s–%s; want error over the episode's span", leak.Status, leak.StartTimeUnixNano, leak.EndTimeUnixNano)
	}

	// The SDK's reader exports the gauges at RunWritten's flush and again
	// at Shutdown: each arrives once or twice, with the run's value.
	gauges := col.gauges(t, 5)
	for name, want := range map[string]float64{MetricStuckMax: 2, MetricLeaked: 1, MetricReleaseP99: 4.5, MetricErrorRate: 1.0 / 3, MetricRequests: 3} {
		dps := gauges[name]
		if len(dps) == 0 {
			t.Errorf("gauge %s: no data point in the Collector's file", name)
		}
		for _, dp := range dps {
			if dp.AsDouble != want || dp.attrs()["leakbench.run"].str() != "before" {
				t.Errorf("gauge %s = %v %v, want %v for run before", name, dp.AsDouble, dp.attrs(), want)
			}
		}
	}
}

// collector is a running tools/otelcol: an OTLP/HTTP receiver at URL whose
// traces and metrics its file exporters write, as OTLP JSON, one export
// request a line, to traces and metrics.
type collector struct {
	URL             string
	traces, metrics string
}

// startCollector builds tools/otelcol, starts it on a free port of
// 127.0.0.1 and stops it when the test ends; its output is in the test's
// log if the test failed.
func startCollector(t *testing.T) *collector {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build the Collector: %v", err)
	}
	src, err := filepath.Abs(collectorDir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "otelcol-leakbench")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off")
	began := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the Collector in %s: %v\n%s", src, err, out)
	}
	t.Logf("built the Collector (%s) in %s", collectorDir, time.Since(began).Round(time.Millisecond))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	col := &collector{URL: "http://" + addr, traces: filepath.Join(tmp, "traces.jsonl"), metrics: filepath.Join(tmp, "metrics.jsonl")}
	config := filepath.Join(tmp, "config.yaml")
	// The one port it opens is the receiver's: no internal metrics
	// endpoint, warnings and errors only on stderr.
	conf := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %q
exporters:
  file:
    path: %q
  file/metrics:
    path: %q
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file/metrics]
`, addr, col.traces, col.metrics)
	if err := os.WriteFile(config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	logPath := filepath.Join(tmp, "collector.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the child has its own descriptor
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", config)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start the Collector: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		defer cancel()
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the Collector (pid %d) exited on interrupt: %v", cmd.Process.Pid, err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("the Collector (pid %d) still running 15 s after an interrupt: killed", cmd.Process.Pid)
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("the Collector's output:\n%s", out)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return col
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			out, _ := os.ReadFile(logPath)
			t.Fatalf("the Collector exited before it listened on %s: %v\n%s", addr, err, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Collector does not listen on %s after 30 s: %v", addr, err)
		}
	}
}

// spans waits (up to 20 s) for at least n spans in the Collector's traces
// file and returns them.
func (c *collector) spans(t *testing.T, n int) []jsonSpan {
	t.Helper()
	var spans []jsonSpan
	c.await(t, c.traces, "spans", n, func(line []byte) (int, error) {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []jsonSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return 0, err
		}
		got := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
				got += len(ss.Spans)
			}
		}
		return got, nil
	}, func() { spans = nil })
	return spans
}

// gauges waits (up to 20 s) for at least n gauges in the Collector's
// metrics file and returns their data points by name.
func (c *collector) gauges(t *testing.T, n int) map[string][]jsonDataPoint {
	t.Helper()
	gauges := map[string][]jsonDataPoint{}
	c.await(t, c.metrics, "gauges", n, func(line []byte) (int, error) {
		var req struct {
			ResourceMetrics []struct {
				ScopeMetrics []struct {
					Metrics []struct {
						Name  string `json:"name"`
						Gauge *struct {
							DataPoints []jsonDataPoint `json:"dataPoints"`
						} `json:"gauge"`
					} `json:"metrics"`
				} `json:"scopeMetrics"`
			} `json:"resourceMetrics"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			return 0, err
		}
		got := 0
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Gauge != nil {
						gauges[m.Name] = append(gauges[m.Name], m.Gauge.DataPoints...)
						got++
					}
				}
			}
		}
		return got, nil
	}, func() { clear(gauges) })
	return gauges
}

// await polls path every 200 ms, up to 20 s, until its complete lines,
// each decoded by line (which returns how many items it held), hold at
// least n items. reset forgets what an earlier poll decoded.
func (c *collector) await(t *testing.T, path, what string, n int, line func([]byte) (int, error), reset func()) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		reset()
		b, err := os.ReadFile(path)
		got := 0
		if i := bytes.LastIndexByte(b, '\n'); err == nil && i >= 0 {
			for l := range bytes.Lines(b[:i+1]) {
				if l = bytes.TrimSpace(l); len(l) == 0 {
					continue
				}
				k, lerr := line(l)
				if lerr != nil {
					err = fmt.Errorf("a line of %s is not an OTLP JSON export request: %w: %s", path, lerr, l)
					break
				}
				got += k
			}
		}
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s in the Collector's file after 20 s, want %d (%v)", got, what, n, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// OTLP JSON's span kind and status code are the protobuf enums' numbers.
const (
	spanKindClient  = 3 // SPAN_KIND_CLIENT
	statusCodeError = 2 // STATUS_CODE_ERROR
)

// jsonSpan is a span of OTLP JSON as the Collector writes it: ids as hex
// strings, 64-bit integers as decimal strings, enums as numbers.
type jsonSpan struct {
	TraceID           string     `json:"traceId"`
	SpanID            string     `json:"spanId"`
	ParentSpanID      string     `json:"parentSpanId"`
	Name              string     `json:"name"`
	Kind              int        `json:"kind"`
	StartTimeUnixNano jsonUint   `json:"startTimeUnixNano"`
	EndTimeUnixNano   jsonUint   `json:"endTimeUnixNano"`
	Attributes        []jsonAttr `json:"attributes"`
	Status            struct {
		Code int `json:"code"`
	} `json:"status"`
}

func (s jsonSpan) attrs() map[string]*jsonValue { return jsonAttrs(s.Attributes) }

type jsonDataPoint struct {
	AsDouble   float64    `json:"asDouble"`
	Attributes []jsonAttr `json:"attributes"`
}

func (d jsonDataPoint) attrs() map[string]*jsonValue { return jsonAttrs(d.Attributes) }

type jsonAttr struct {
	Key   string    `json:"key"`
	Value jsonValue `json:"value"`
}

// jsonValue is an AnyValue of OTLP JSON (the kinds leakbench sends).
type jsonValue struct {
	StringValue *string  `json:"stringValue,omitempty"`
	IntValue    jsonUint `json:"intValue,omitempty"`
	DoubleValue *float64 `json:"doubleValue,omitempty"`
	BoolValue   *bool    `json:"boolValue,omitempty"`
}

func (v *jsonValue) str() string {
	if v == nil || v.StringValue == nil {
		return ""
	}
	return *v.StringValue
}

func (v *jsonValue) int() int64 {
	if v == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(v.IntValue), 10, 64)
	return n
}

func (v *jsonValue) double() float64 {
	if v == nil || v.DoubleValue == nil {
		return 0
	}
	return *v.DoubleValue
}

func (v *jsonValue) bool() bool { return v != nil && v.BoolValue != nil && *v.BoolValue }

func (v *jsonValue) String() string {
	switch {
	case v == nil:
		return "<nil>"
	case v.StringValue != nil:
		return strconv.Quote(*v.StringValue)
	case v.IntValue != "":
		return string(v.IntValue)
	case v.DoubleValue != nil:
		return strconv.FormatFloat(*v.DoubleValue, 'g', -1, 64)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	}
	return "{}"
}

func jsonAttrs(kvs []jsonAttr) map[string]*jsonValue {
	out := map[string]*jsonValue{}
	for i := range kvs {
		out[kvs[i].Key] = &kvs[i].Value
	}
	return out
}

// jsonUint is a 64-bit integer of OTLP JSON: a decimal string (or, as
// receivers accept, a number).
type jsonUint string

func (u *jsonUint) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Errorf("not a 64-bit integer: %s", b)
		}
	}
	*u = jsonUint(s)
	return nil
}

func (u jsonUint) uint() uint64 {
	n, _ := strconv.ParseUint(string(u), 10, 64)
	return n
}

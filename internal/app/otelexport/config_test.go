package otelexport

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
)

// clearOTelEnv unsets the standard variables for the test.
func clearOTelEnv(t *testing.T) {
	for _, k := range []string{envEndpoint, envTracesEndpoint, envMetricsEndpoint, envSDKDisabled} {
		t.Setenv(k, "")
	}
}

// TestConfigSources: nothing is exported without the flag or a variable;
// the variables alone turn it on; the flag wins over them; bad input is an
// error that says what was wrong; credentials never show in the endpoint.
func TestConfigSources(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       Config
		env       map[string]string
		on        bool
		traces    bool
		endpoint  string // want, "" to skip
		wantError string
	}{
		{name: "neither", cfg: Config{SampleRatio: 1}},
		{name: "sdk disabled", cfg: Config{SampleRatio: 1}, env: map[string]string{envEndpoint: "http://127.0.0.1:1", envSDKDisabled: "true"}},
		{name: "shared variable", cfg: Config{SampleRatio: 1}, env: map[string]string{envEndpoint: "http://127.0.0.1:1/otlp"}, on: true, traces: true, endpoint: "http://127.0.0.1:1/otlp/v1/traces"},
		{name: "metrics variable only", cfg: Config{SampleRatio: 1}, env: map[string]string{envMetricsEndpoint: "http://127.0.0.1:1/v1/metrics"}, on: true},
		{name: "flag wins", cfg: Config{Endpoint: "http://127.0.0.1:2", SampleRatio: 1}, env: map[string]string{envTracesEndpoint: "http://127.0.0.1:1/v1/traces"}, on: true, traces: true, endpoint: "http://127.0.0.1:2/v1/traces"},
		{name: "flag with credentials", cfg: Config{Endpoint: "https://lb:s3cret@127.0.0.1:2", SampleRatio: 1}, on: true, traces: true, endpoint: "https://lb:xxxxx@127.0.0.1:2/v1/traces"},
		{name: "not a URL", cfg: Config{Endpoint: "127.0.0.1:4318", SampleRatio: 1}, wantError: "want the collector's OTLP/HTTP base URL"},
		{name: "ratio above 1", cfg: Config{Endpoint: "http://127.0.0.1:2", SampleRatio: 2}, wantError: "--otlp-sample 2: want a ratio from 0 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			x, err := Start(context.Background(), tc.cfg)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer x.Shutdown(context.Background())
			if (x != nil) != tc.on {
				t.Fatalf("exporter %v, want on=%v", x, tc.on)
			}
			if (x.Spans("r") != nil) != tc.traces {
				t.Errorf("request spans %v, want traces=%v", x.Spans("r") != nil, tc.traces)
			}
			if tc.endpoint != "" && x.Endpoint() != tc.endpoint {
				t.Errorf("endpoint %q, want %q", x.Endpoint(), tc.endpoint)
			}
			if strings.Contains(x.Endpoint(), "s3cret") {
				t.Errorf("endpoint shows the password: %s", x.Endpoint())
			}
		})
	}
}

// TestFlagWinsOverVariable: with both set, spans reach the flag's
// collector and none the variable's.
func TestFlagWinsOverVariable(t *testing.T) {
	clearOTelEnv(t)
	flagRcv, envRcv := otlptest.Start(t), otlptest.Start(t)
	t.Setenv(envEndpoint, envRcv.URL)
	x, err := Start(context.Background(), Config{Endpoint: flagRcv.URL, SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := reqindex.Request{Method: "tools/list", Start: time.Now(), Outcome: rundir.RequestOK}
	r.Trace[0], r.Span[0] = 1, 1
	x.Spans("run").RequestEnded(&r, "s")
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(flagRcv.Spans()) != 1 || len(envRcv.Spans()) != 0 {
		t.Errorf("flag's collector got %d spans, the variable's %d; want 1 and 0", len(flagRcv.Spans()), len(envRcv.Spans()))
	}
}

// TestSampleRatio: at ratio 0.25 the requests exported are exactly those
// the SDK's TraceIDRatioBased samples (so a trace is all in or all out,
// whoever decides), about a quarter; at 0 none.
func TestSampleRatio(t *testing.T) {
	clearOTelEnv(t)
	rcv := otlptest.Start(t)
	x, err := Start(context.Background(), Config{Endpoint: rcv.URL, SampleRatio: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	sampler := sdktrace.TraceIDRatioBased(0.25)
	sink := x.Spans("run")
	want := map[string]bool{}
	const n = 2000
	for i := range n {
		r := reqindex.Request{Method: "tools/list", Start: time.Now(), Outcome: rundir.RequestOK}
		tid := randomTraceID()
		r.Trace, r.Span = tid, randomSpanID()
		r.User = i
		if sampler.ShouldSample(sdktrace.SamplingParameters{TraceID: trace.TraceID(tid)}).Decision == sdktrace.RecordAndSample {
			want[tid.String()] = true
		}
		sink.RequestEnded(&r, "s")
	}
	if err := x.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rcv.Spans()
	if len(got) != len(want) || len(got) < n/8 || len(got) > n*3/8 {
		t.Fatalf("%d spans exported, want the %d sampled ones (about %d)", len(got), len(want), n/4)
	}
	for _, s := range got {
		if !want[otlptest.HexID(s.TraceId)] {
			t.Errorf("span of trace %x exported, not sampled by TraceIDRatioBased(0.25)", s.TraceId)
		}
	}
	if x0, _ := Start(context.Background(), Config{Endpoint: rcv.URL, SampleRatio: 0}); x0.Spans("run") != nil {
		t.Error("ratio 0 still gives a request sink")
	} else {
		_ = x0.Shutdown(context.Background())
	}
}

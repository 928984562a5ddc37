//go:build linux

package otelexport

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// BenchmarkEngineExport: the engine's CPU per request with request spans
// off and exported at sample ratio 1 (and 0.1) — to a collector on 127.0.0.1 that
// reads each batch and answers (its CPU is in this process too, so the
// figure is an upper bound), and to one that is down — side by side with
// BenchmarkEnginePeakRate's setup: an MCP server in a child process, 50
// users back to back for 3 s, with a run directory.
//
//	go test ./internal/app/otelexport -run '^$' -bench EngineExport -benchtime 3x
func BenchmarkEngineExport(b *testing.B) {
	const conns, d = 50, 3 * time.Second
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	sink := startSink(b)
	down := closedPort(b)
	for _, mode := range []struct {
		name, endpoint string
		ratio          float64
	}{{"off", "", 0}, {"ratio=1", sink, 1}, {"ratio=0.1", sink, 0.1}, {"ratio=1/collector-down", down, 1}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				var x *Exporter
				if mode.endpoint != "" {
					var err error
					if x, err = Start(context.Background(), Config{Endpoint: mode.endpoint, SampleRatio: mode.ratio}); err != nil {
						b.Fatal(err)
					}
				}
				p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Scenarios: []plan.Scenario{{
					Name: "calls", Executor: plan.ExecConstantVUs, VUs: conns, Duration: plan.Duration(d), GracefulStop: plan.Duration(time.Second),
					Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "hello"}}},
				}}}
				c0 := procstat.Self()
				res, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: h.URL, RunDir: b.TempDir(), Spans: x.Spans("bench")})
				_ = x.Shutdown(context.Background()) // the queue's last batches: part of the cost
				c1 := procstat.Self()
				if err != nil || res.Failures != 0 {
					b.Fatalf("%v; %d failures: %q", err, res.Failures, res.ErrorSamples)
				}
				b.ReportMetric(float64(res.Requests)/d.Seconds(), "req/s")
				b.ReportMetric(float64((c1-c0).Microseconds())/float64(res.Requests), "cpu-µs/req")
				if x != nil {
					c := x.counts()
					b.ReportMetric(float64(c.requests-c.exported), "dropped")
				}
			}
		})
	}
}

// startSink is a collector on 127.0.0.1 that reads each request and
// answers 200 with an empty body.
func startSink(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

func closedPort(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// BenchmarkEngineExportActiveUsers is BenchmarkEngineExport in the
// incident's shape rather than back to back: 3,000 users
// (LEAKBENCH_ACTIVE_USERS), a connection each, thinking 0.2–1.0 s between
// tools/call requests (about 5,000 requests/s), for 10 s after a 3 s ramp —
// export off and at sample ratio 1, side by side. The CPU per request is
// the whole run's (ramp and handshakes included, alike in both).
//
//	go test ./internal/app/otelexport -run '^$' -bench EngineExportActiveUsers -benchtime 1x -count 3
func BenchmarkEngineExportActiveUsers(b *testing.B) {
	users := 3000
	if n, err := strconv.Atoi(os.Getenv("LEAKBENCH_ACTIVE_USERS")); err == nil && n > 0 {
		users = n
	}
	mcptest.RaiseOpenFiles(b)
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	sink := startSink(b)
	for _, mode := range []struct {
		name, endpoint string
	}{{"off", ""}, {"ratio=1", sink}} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				var x *Exporter
				if mode.endpoint != "" {
					var err error
					if x, err = Start(context.Background(), Config{Endpoint: mode.endpoint, SampleRatio: 1}); err != nil {
						b.Fatal(err)
					}
				}
				p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, Scenarios: []plan.Scenario{{
					Name: "agents", Executor: plan.ExecRampingVUs,
					Stages: []plan.Stage{{Duration: plan.Duration(3 * time.Second), Target: users}, {Duration: plan.Duration(10 * time.Second), Target: users}},
					Flow: []plan.Step{
						{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkUniform, Min: plan.Duration(200 * time.Millisecond), Max: plan.Duration(time.Second)}},
						{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "user {{user}} iteration {{iteration}}"}},
					},
				}}}
				c0 := procstat.Self()
				res, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: h.URL, RunDir: b.TempDir(), Spans: x.Spans("bench")})
				_ = x.Shutdown(context.Background())
				c1 := procstat.Self()
				if err != nil || res.Failures != 0 {
					b.Fatalf("%v; %d failures: %q", err, res.Failures, res.ErrorSamples)
				}
				b.ReportMetric(float64((c1-c0).Microseconds())/float64(res.Requests), "cpu-µs/req")
				b.ReportMetric(float64(res.Requests)/13, "req/s")
				if x != nil {
					c := x.counts()
					b.ReportMetric(float64(c.requests-c.exported), "dropped")
				}
			}
		})
	}
}

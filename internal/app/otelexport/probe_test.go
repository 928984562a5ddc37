package otelexport

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
)

// TestProbeWritten: what `leakbench probe --otlp-endpoint` left — its
// episodes and its summary — reaches the receiver: the database named by
// the DSN (its password nowhere), the timeout's kill an error by the
// probe's own stuck threshold, the gauges from the probe's figures.
func TestProbeWritten(t *testing.T) {
	clearOTelEnv(t)
	rcv := otlptest.Start(t)
	x, err := Start(context.Background(), Config{Endpoint: rcv.URL, SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Shutdown(context.Background())
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	writeLines(t, filepath.Join(dir, rundir.EpisodesFile),
		rundir.Episode{PID: 7, Start: t0, End: t0.Add(4 * time.Second), HoldSeconds: 4, EndReason: rundir.EndTimeout, Query: "SELECT 1"},
		rundir.Episode{PID: 8, Start: t0, End: t0.Add(3 * time.Second), HoldSeconds: 3, EndReason: rundir.EndReleased, Query: "SELECT 2"})
	writeLines(t, filepath.Join(dir, rundir.ProbeSummaryFile), rundir.ProbeSummary{MaxStuckIdleInTx: 1, TimeoutTerminated: 1, ReleaseP99Seconds: 3.9})
	var log bytes.Buffer
	x.ProbeWritten(context.Background(), dir, "postgres://watcher:s3cret@127.0.0.1:5433/appdb", "", 5*time.Second, &log)
	if !strings.Contains(log.String(), "otlp: 2 of 2 spans delivered") || strings.Contains(log.String(), "s3cret") {
		t.Errorf("log: %q", log.String())
	}
	spans := rcv.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the 2 episodes", len(spans))
	}
	for _, s := range spans {
		a := otlptest.Attrs(s.Attributes)
		if a["db.namespace"].GetStringValue() != "appdb" || a["server.port"].GetIntValue() != 5433 || a["server.address"].GetStringValue() != "127.0.0.1" {
			t.Errorf("episode attributes: %v", a)
		}
		// With the probe's 5 s threshold neither is stuck: no error.
		if a["leakbench.stuck"].GetBoolValue() || s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("episode of %.0fs judged stuck by a 5 s threshold", a["leakbench.hold_seconds"].GetDoubleValue())
		}
	}
	if m := rcv.Metrics()[MetricLeaked]; m == nil || m.GetGauge().GetDataPoints()[0].GetAsDouble() != 1 {
		t.Errorf("gauge %s: %v, want 1", MetricLeaked, m)
	}
	if m := rcv.Metrics()[MetricRequests]; m != nil {
		t.Errorf("a probe sent no requests, yet gauge %s was exported", MetricRequests)
	}
}

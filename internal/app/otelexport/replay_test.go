package otelexport

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/otlptest"
)

// TestReplayShardedRequests: a run whose requests never passed through
// the exporter's sink (a sharded run, played in containers) has them
// exported from its requests.jsonl when it is written — the ids, times
// and attributes the engine's sink gives — every one of 10,000 through a
// queue of 512 (the replay waits for the exporter instead of dropping);
// a run whose requests came live is not exported twice.
func TestReplayShardedRequests(t *testing.T) {
	rcv := otlptest.Start(t)
	ctx := context.Background()
	x, err := Start(ctx, Config{Endpoint: rcv.URL, SampleRatio: 1, Version: "test", MaxQueue: 512})
	if err != nil || x == nil {
		t.Fatalf("start: %v, %v", x, err)
	}
	defer x.Shutdown(ctx)

	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const n = 10_000
	lines := make([]any, 0, n)
	for i := range n {
		lines = append(lines, rundir.Request{TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1), User: i % 7, Scenario: "agents", Iteration: int64(i),
			Method: "tools/call", Name: "get_team_tools", Start: t0.Add(time.Duration(i) * time.Millisecond), Seconds: 0.04, Outcome: rundir.RequestOK})
	}
	dir := t.TempDir()
	writeLines(t, filepath.Join(dir, rundir.RequestsFile), lines...)
	sum := &rundir.Summary{Name: "sharded", Load: &rundir.LoadResult{Requests: n}}
	x.RunWritten(ctx, dir, sum, "", nil)

	if o := sum.OTLP; o == nil || o.RequestSpans != n || o.SpansExported != n || o.SpansDropped != 0 {
		t.Fatalf("otlp section %+v, want %d request spans, all delivered", sum.OTLP, n)
	}
	spans := rcv.Spans()
	if len(spans) != n {
		t.Fatalf("the receiver got %d spans, want %d", len(spans), n)
	}
	var first = spans[0]
	for _, s := range spans {
		if otlptest.HexID(s.TraceId) == fmt.Sprintf("%032x", 1) {
			first = s
		}
	}
	a := otlptest.Attrs(first.Attributes)
	if otlptest.HexID(first.SpanId) != fmt.Sprintf("%016x", 1) || first.Name != "tools/call get_team_tools" || first.StartTimeUnixNano != uint64(t0.UnixNano()) ||
		first.EndTimeUnixNano-first.StartTimeUnixNano != uint64(40*time.Millisecond) || a["leakbench.run"].GetStringValue() != "sharded" ||
		a["leakbench.scenario"].GetStringValue() != "agents" || a["gen_ai.tool.name"].GetStringValue() != "get_team_tools" {
		t.Errorf("replayed span %v, want the first request's ids, times and attributes", first)
	}

	// A run fed live: RunWritten exports no request a second time.
	dir2 := t.TempDir()
	writeLines(t, filepath.Join(dir2, rundir.RequestsFile), lines[:3]...)
	_ = x.Spans("live")
	sum2 := &rundir.Summary{Name: "live", Load: &rundir.LoadResult{Requests: 3}}
	x.RunWritten(ctx, dir2, sum2, "", nil)
	if sum2.OTLP == nil || sum2.OTLP.RequestSpans != 0 || len(rcv.Spans()) != n {
		t.Errorf("a live run's requests were replayed: %+v, %d spans at the receiver", sum2.OTLP, len(rcv.Spans()))
	}
}

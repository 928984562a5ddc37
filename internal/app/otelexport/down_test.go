package otelexport

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
)

// heapMB is the live heap after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestCollectorDown: with the collector refusing connections, or accepting
// them and never answering, 200,000 request spans cost the exporter a
// bounded heap (its queue, not the spans), RunWritten returns within its
// flush bounds, and every span not delivered is counted as dropped, in
// summary.json's otlp and in the log line with the reason.
func TestCollectorDown(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 spans against a collector that is down")
	}
	clearOTelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500") // ms per attempt, for the hanging collector
	for _, mode := range []string{"refused", "hanging"} {
		t.Run(mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			var conns []net.Conn
			accepted := make(chan struct{})
			if mode == "refused" {
				ln.Close()
				close(accepted)
			} else {
				go func() { // accept, read nothing, answer nothing
					defer close(accepted)
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						conns = append(conns, c)
					}
				}()
			}
			defer func() {
				ln.Close()
				<-accepted
				for _, c := range conns {
					c.Close()
				}
			}()
			x, err := Start(context.Background(), Config{Endpoint: "http://" + addr, SampleRatio: 1, FlushTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			sink := x.Spans("down")
			base := heapMB()
			var early float64
			const n = 200_000
			t0 := time.Now()
			for i := range n {
				r := reqindex.Request{User: i % 500, Iteration: int64(i), Method: "tools/call", Name: "get_team_tools", Start: t0, Took: time.Millisecond, Outcome: rundir.RequestOK}
				r.Trace, r.Span = randomTraceID(), randomSpanID()
				sink.RequestEnded(&r, "agents")
				if i == n/10 {
					early = heapMB()
				}
			}
			late := heapMB()
			sum := &rundir.Summary{Name: "down"}
			var log bytes.Buffer
			start := time.Now()
			x.RunWritten(context.Background(), t.TempDir(), sum, "", &log)
			took := time.Since(start)
			_ = x.Shutdown(context.Background())
			t.Logf("%s: heap %.1f MB before, %.1f MB after %d spans, %.1f MB after %d; RunWritten %s; %s",
				mode, base, early, n/10, late, n, took.Round(time.Millisecond), strings.TrimSpace(log.String()))
			// Unbounded, 180,000 more spans would hold well over 100 MB.
			if late-early > 16 {
				t.Errorf("heap grew %.1f MB from %d to %d spans with the collector down: not bounded by the queue", late-early, n/10, n)
			}
			if took > 15*time.Second {
				t.Errorf("RunWritten took %s with the collector down", took)
			}
			o := sum.OTLP
			if o == nil || o.RequestSpans != n || o.SpansExported != 0 || o.SpansDropped != n || o.Error == "" {
				t.Fatalf("otlp section %+v, want %d request spans, all dropped, with the error", o, n)
			}
			if !strings.Contains(log.String(), "200000 spans dropped") {
				t.Errorf("log line does not count the dropped spans: %q", log.String())
			}
		})
	}
}

package gateway_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/leakbench/leakbench/scenarios/stack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkFixedToolsCall measures tools/call on the fixed gateway with its
// real database work — token scoping (two queries) and the tool's own unit
// of work, through PgBouncer — from concurrent MCP sessions (go-sdk's
// client, 4 per CPU). It reports throughput and the latency percentiles of
// one call; ns/op is wall time per call across all sessions.
//
//	go test -run '^$' -bench BenchmarkFixedToolsCall -benchtime 2000x ./gateway-under-test/
func BenchmarkFixedToolsCall(b *testing.B) {
	env := startStack(b, stack.Config{Variant: "fixed", Users: 40, GatewayPoolSize: 20, PgBouncerPoolSize: 20})
	ctx := context.Background()
	const perCPU = 4
	n := perCPU * runtime.GOMAXPROCS(0)
	sessions := make(chan *mcp.ClientSession, n)
	for i := range n {
		sessions <- connect(b, ctx, env.GatewayURL, env.Tokens[i])
	}
	for _, bc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"read/get_team_tools", "get_team_tools", nil},
		{"write/record_note", "record_note", map[string]any{"note": "benchmark"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: bc.tool, Arguments: bc.args}
			hist := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
			var mu sync.Mutex
			b.SetParallelism(perCPU)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				cs := <-sessions
				defer func() { sessions <- cs }()
				local := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
				for pb.Next() {
					t0 := time.Now()
					res, err := cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Errorf("%s: %v %s", bc.tool, err, resultText(res))
						return
					}
					_ = local.RecordValue(time.Since(t0).Microseconds())
				}
				mu.Lock()
				hist.Merge(local)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(hist.ValueAtQuantile(50))/1000, "p50-ms")
			b.ReportMetric(float64(hist.ValueAtQuantile(99))/1000, "p99-ms")
			b.ReportMetric(float64(hist.Max())/1000, "max-ms")
		})
	}
}

package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// BenchmarkShardsCPU plays one fixed amount of work (60 users × 100
// iterations of tools/call + ping, 12,000 requests) against a trivial MCP
// endpoint in a child process, as one run and as 3 shards side by side in
// this process, each writing its run directory (histograms.hlog,
// series.json), and reports the engine's CPU per request: what sharding
// costs in total.
func BenchmarkShardsCPU(b *testing.B) {
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, Scenarios: []plan.Scenario{{
		Name: "calls", Executor: plan.ExecPerVUIterations, VUs: 60, Iterations: 100, MaxDuration: plan.Duration(time.Minute),
		Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "hello"}}, {Kind: plan.OpPing}},
	}}}
	for _, n := range []int{1, 3} {
		name := "whole"
		if n > 1 {
			name = "3shards"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				c0 := procstat.Self()
				var wg sync.WaitGroup
				errs := make([]error, n)
				reqs := make([]int64, n)
				for i := range n {
					dir := b.TempDir()
					wg.Go(func() {
						res, err := RunPlan(context.Background(), p, RunOptions{Target: h.URL, RunDir: dir, Segment: plan.Segment{Index: i, Count: n}})
						if err == nil {
							if res.Failures != 0 {
								err = errors.New(res.ErrorSamples[0])
							}
							reqs[i] = res.Requests
						}
						errs[i] = err
					})
				}
				wg.Wait()
				c1 := procstat.Self()
				if err := errors.Join(errs...); err != nil {
					b.Fatal(err)
				}
				var total int64
				for _, r := range reqs {
					total += r
				}
				b.ReportMetric(float64(total), "requests")
				b.ReportMetric(float64((c1-c0).Microseconds())/float64(total), "cpu-µs/req")
			}
		})
	}
}

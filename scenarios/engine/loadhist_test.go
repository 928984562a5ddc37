package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestLoadHistogramLog: load.hlog holds one "all" histogram per load.jsonl
// interval that answered requests, each the one its line's percentiles
// came from, and together every answered request of the run.
func TestLoadHistogramLog(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	dir := t.TempDir()
	p := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 3, duration: 2500ms, flow: [ping, think: 20ms]}\n")
	res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, rundir.LoadHistogramsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr := hdrhistogram.NewHistogramLogReader(f)
	var hists []*hdrhistogram.Histogram
	var total int64
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if h.Tag() != LoadTagAll {
			t.Errorf("tag %q in a run without http steps", h.Tag())
		}
		hists = append(hists, h)
		total += h.TotalCount()
	}
	answered := res.Latency[rundir.OpAll].Count
	if total != answered || total == 0 {
		t.Errorf("load.hlog holds %d answered requests, the run %d", total, answered)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.LoadFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != len(hists) {
		t.Fatalf("%d load.jsonl lines, %d intervals in load.hlog", len(lines), len(hists))
	}
	for i, line := range lines {
		var pt rundir.LoadPoint
		if err := json.Unmarshal([]byte(line), &pt); err != nil {
			t.Fatal(err)
		}
		h := hists[i]
		// The log keeps times as seconds with three decimals: read back,
		// they may come out a millisecond early.
		if got, gap := float64(h.ValueAtQuantile(95))/1000, pt.Time.UnixMilli()-h.EndTimeMs(); got != pt.P95Ms || gap < 0 || gap > 1 {
			t.Errorf("interval %d: hlog p95 %v ms ending %d, load.jsonl %v ms at %d", i, got, h.EndTimeMs(), pt.P95Ms, pt.Time.UnixMilli())
		}
	}
}

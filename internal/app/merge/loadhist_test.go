package merge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestMergedSecondsHaveExactPercentiles: a merged second's percentiles
// are those of one histogram fed both shards' samples of that second, not
// the larger shard's: here shard 0 answered 300 requests in 1 ms and
// shard 1 100 in 100 ms, so the merged median is 1 ms (the larger
// shard's would be 100 ms) and the p99 100 ms. A merged run keeps the
// merged intervals, so it merges again to the same figures.
func TestMergedSecondsHaveExactPercentiles(t *testing.T) {
	root := t.TempDir()
	t0 := shardsStart
	dirs := writeShards(t, root, 2, 3*time.Second)
	for i, c := range []struct {
		n  int
		us int64
	}{{300, 1000}, {100, 100000}} {
		d := dirs[i]
		var b bytes.Buffer
		w := hdrhistogram.NewHistogramLogWriter(&b)
		if err := w.OutputStartTime(t0.UnixMilli()); err != nil {
			t.Fatal(err)
		}
		for s := range 3 {
			h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
			for range c.n {
				h.RecordValue(c.us) //nolint:errcheck
			}
			h.SetTag("all")
			// The interval of the shard's load point s (writeShard's).
			h.SetStartTimeMs(t0.Add(time.Duration(s) * time.Second).UnixMilli())
			h.SetEndTimeMs(t0.Add(time.Duration(s+1) * time.Second).UnixMilli())
			if err := w.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
		}
		if i == 1 {
			b.WriteString("Tag=all,1764579603.000,0.999,100.0,HISTFAAAA") // a line a kill cut short
		}
		if err := os.WriteFile(filepath.Join(d, rundir.LoadHistogramsFile), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	if _, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: out}); err != nil {
		t.Fatal(err)
	}
	check := func(dir string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, rundir.LoadFile))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for line := range bytes.Lines(raw) {
			var pt rundir.LoadPoint
			if err := json.Unmarshal(line, &pt); err != nil {
				t.Fatal(err)
			}
			if n++; pt.ElapsedSeconds != float64(n) {
				t.Errorf("%s: point %d at %v s", dir, n, pt.ElapsedSeconds)
			}
			if pt.P50Ms < 0.99 || pt.P50Ms > 1.01 || pt.P99Ms < 99 || pt.P99Ms > 101 {
				t.Errorf("%s: second %v: p50 %v ms, p99 %v ms; want 1 and 100", dir, pt.ElapsedSeconds, pt.P50Ms, pt.P99Ms)
			}
		}
		if n != 3 {
			t.Errorf("%s: %d seconds, want 3", dir, n)
		}
	}
	check(out)
	// The merged run, merged again (as one shard of one), keeps them.
	again := filepath.Join(root, "again")
	if _, err := merge.Run(context.Background(), merge.Options{Dirs: []string{out}, Out: again}); err != nil {
		t.Fatal(err)
	}
	check(again)
}

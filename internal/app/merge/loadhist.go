package merge

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/results"
)

// exactPercentiles sets the percentiles of every merged second in bySec
// from the shards' interval histograms (load.hlog), merged by second as
// the load points are, and writes the merged intervals to out's load.hlog
// so that a merged run merges again. It changes nothing, and writes no
// log, unless every shard has one.
func exactPercentiles(out string, shards []*results.Shard, started time.Time, bySec map[int64]*rundir.LoadPoint) error {
	type second struct{ all, http *hdrhistogram.Histogram }
	merged := map[int64]*second{}
	for _, sh := range shards {
		p := filepath.Join(sh.Dir, rundir.LoadHistogramsFile)
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an older shard: keep the upper bounds
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		// A log a kill cut short ends with an error after its whole
		// histograms: what came before stands.
		_ = hdrlog.Each(f, func(h *hdrhistogram.Histogram) {
			sec := secondOf(time.UnixMilli(h.EndTimeMs()), started)
			s := merged[sec]
			if s == nil {
				s = &second{}
				merged[sec] = s
			}
			dst := &s.all
			if h.Tag() == engine.LoadTagHTTP {
				dst = &s.http
			}
			if *dst == nil {
				*dst = h
			} else {
				(*dst).Merge(h)
			}
		})
		f.Close()
	}
	secs := make([]int64, 0, len(merged))
	for sec, s := range merged {
		pt := bySec[sec]
		if pt == nil {
			continue // a second whose load line a kill cut short
		}
		pt.P50Ms, pt.P95Ms, pt.P99Ms = percentilesMs(s.all)
		pt.HTTPP50Ms, pt.HTTPP95Ms, pt.HTTPP99Ms = percentilesMs(s.http)
		secs = append(secs, sec)
	}
	slices.Sort(secs)
	intervals := make([]hdrlog.Interval, len(secs))
	for i, sec := range secs {
		// Each second ends when its merged load point does.
		end, s := bySec[sec].Time, merged[sec]
		intervals[i] = hdrlog.Interval{From: end.Add(-time.Second), To: end,
			Hists: []hdrlog.Tagged{{Tag: engine.LoadTagAll, Hist: s.all}, {Tag: engine.LoadTagHTTP, Hist: s.http}}}
	}
	return hdrlog.WriteIntervals(filepath.Join(out, rundir.LoadHistogramsFile), started, "leakbench merge: the shards' intervals by second", intervals)
}

// secondOf is the merged second an interval ending at end falls in: the
// n-th (from 0) is the one that ends at most n+1 seconds after the start —
// so that a merged run's points, which end on whole seconds, fall in the
// same seconds when it is merged again.
func secondOf(end, started time.Time) int64 {
	return max(int64(math.Ceil(end.Sub(started).Seconds()))-1, 0)
}

// percentilesMs are h's p50, p95 and p99 in milliseconds, as the engine
// writes them (0 for no histogram).
func percentilesMs(h *hdrhistogram.Histogram) (p50, p95, p99 float64) {
	if h == nil || h.TotalCount() == 0 {
		return 0, 0, 0
	}
	return float64(h.ValueAtQuantile(50)) / 1000, float64(h.ValueAtQuantile(95)) / 1000, float64(h.ValueAtQuantile(99)) / 1000
}

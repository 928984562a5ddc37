package poolmetrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	dto "github.com/prometheus/client_model/go"
)

// The service's use-time and wait-time histograms (OpenTelemetry's
// db.client.connection.use_time and …wait_time) give percentiles through
// their cumulative buckets: the increase of each bucket over the run is
// a histogram of the run's checkouts, and a percentile of it is estimated
// as Prometheus' histogram_quantile estimates one. That function lives in
// the Prometheus server (promql), not in a library a client can import
// at a sensible cost, so Quantile below is written by hand after it.

// histogramOf turns a decoded histogram into bounds in seconds (times
// scale) and its cumulative counts, the finite buckets sorted by bound;
// the +Inf bucket is the count. nil when it has no finite bucket.
func histogramOf(h *dto.Histogram, scale float64) *rundir.Histogram {
	if h == nil {
		return nil
	}
	count := h.GetSampleCountFloat()
	if count == 0 {
		count = float64(h.GetSampleCount())
	}
	type bucket struct{ le, n float64 }
	var bs []bucket
	for _, b := range h.GetBucket() {
		n := b.GetCumulativeCountFloat()
		if n == 0 {
			n = float64(b.GetCumulativeCount())
		}
		le := b.GetUpperBound()
		switch {
		case math.IsNaN(le):
		case math.IsInf(le, 1):
			count = max(count, n) // the text parser keeps the +Inf bucket; the _count says the same
		default:
			bs = append(bs, bucket{le * scale, n})
		}
	}
	if len(bs) == 0 {
		return nil
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmpFloat(a.le, b.le) })
	out := &rundir.Histogram{Count: count}
	for _, b := range bs {
		out.UpperBounds = append(out.UpperBounds, b.le)
		out.Cumulative = append(out.Cumulative, b.n)
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fieldHistogram reads the buckets of the histogram whose _sum f names,
// from the same alternative and series fieldValue reads: summed over
// those series, nil when the alternative read is not a histogram's sum
// or its series disagree on their bounds.
func (idx seriesIndex) fieldHistogram(f field, labels map[string]string, pool string) *rundir.Histogram {
	for _, sel := range f {
		var sum *rundir.Histogram
		found := false
		for _, s := range idx[sel.name] {
			if !hasLabels(s.labels, sel.labels) || !hasLabels(s.labels, labels) || !inPool(s.labels, pool) {
				continue
			}
			h := histogramOf(s.hist, sel.scale)
			if h == nil {
				return nil // a summary or a counter: no buckets for this series, so none for the sum
			}
			if !found {
				sum, found = h, true
			} else if sum = sum.Plus(h); sum == nil {
				return nil
			}
		}
		if found {
			return sum
		}
	}
	return nil
}

// HistogramRun adds up the increase of a histogram's buckets over a run,
// one scrape at a time, as the summary adds up the pool's counters: a
// count that went back means the service restarted, and its counts since
// then are the increase.
type HistogramRun struct {
	prev     *rundir.Histogram
	increase *rundir.Histogram
	// mixed: the bounds changed during the run (a restart with other
	// buckets): the increases before and after cannot be added, and no
	// percentile is given.
	mixed bool
}

// Add takes the histogram of the next scrape. A scrape without it (nil)
// breaks the sequence: the next one with it is a new start, its counts
// not counted, since nothing says what they rose from.
func (r *HistogramRun) Add(h *rundir.Histogram) {
	prev := r.prev
	r.prev = h.Clone()
	if prev == nil || h == nil {
		return
	}
	d := h.Clone()
	if prev.SameBounds(h) && !wentBack(prev, h) {
		for i := range d.Cumulative {
			d.Cumulative[i] -= prev.Cumulative[i]
		}
		d.Count -= prev.Count
	} // else the service restarted, perhaps with other buckets: everything since counts
	switch {
	case r.increase == nil:
		r.increase = d
	case r.increase.SameBounds(d):
		r.increase = r.increase.Plus(d)
	default:
		r.mixed = true
	}
}

// wentBack reports whether any count of h is below prev's: a restart.
func wentBack(prev, h *rundir.Histogram) bool {
	if h.Count < prev.Count {
		return true
	}
	for i, c := range h.Cumulative {
		if c < prev.Cumulative[i] {
			return true
		}
	}
	return false
}

// Increase is the histogram of the run so far: nil before two scrapes
// with buckets, and when the bounds changed.
func (r *HistogramRun) Increase() *rundir.Histogram {
	if r.mixed {
		return nil
	}
	return r.increase
}

// Quantile estimates the q-quantile (0 < q < 1) of h's observations as
// Prometheus' histogram_quantile does: the bucket where the rank q·Count
// falls, and a linear interpolation between its lower and upper bound (0
// as the lower bound of the first bucket, when its bound is positive).
// A rank in the +Inf bucket gives the highest finite bound, marked
// AtLeast: all that is known is that it is beyond. ok is false when h
// counted nothing.
func Quantile(q float64, h *rundir.Histogram) (out rundir.PoolTimeQuantile, ok bool) {
	if h == nil || h.Count <= 0 || len(h.UpperBounds) == 0 {
		return out, false
	}
	rank := q * h.Count
	below := 0.0 // the cumulative count under the current bucket
	for i, le := range h.UpperBounds {
		// Counts from scrapes of a histogram under way can be a hair off
		// monotonic; histogram_quantile makes them so, and so does this.
		c := max(h.Cumulative[i], below)
		if c >= rank {
			lo := 0.0
			if i > 0 {
				lo = h.UpperBounds[i-1]
			} else if le <= 0 {
				return rundir.PoolTimeQuantile{Seconds: le, BucketLowSeconds: le, BucketHighSeconds: le}, true
			}
			v := le
			if n := c - below; n > 0 {
				v = lo + (le-lo)*(rank-below)/n
			}
			return rundir.PoolTimeQuantile{Seconds: v, BucketLowSeconds: lo, BucketHighSeconds: le}, true
		}
		below = c
	}
	top := h.UpperBounds[len(h.UpperBounds)-1]
	return rundir.PoolTimeQuantile{Seconds: top, BucketLowSeconds: top, AtLeast: true}, true
}

// Quantiles gives the p50 and p95 of a run's histogram increase, with
// its source in words: what is "the service pool's use_time histogram",
// counted is "checkouts". nil when the run counted nothing.
func Quantiles(h *rundir.Histogram, what, counted string) *rundir.PoolTimeQuantiles {
	p50, ok := Quantile(0.5, h)
	if !ok {
		return nil
	}
	p95, _ := Quantile(0.95, h)
	src := fmt.Sprintf("measured: %s, %.0f %s over the run in %d finite buckets; an estimate, interpolated linearly within the bucket each falls in as Prometheus' histogram_quantile does, so no closer than the bucket's edges",
		what, h.Count, counted, len(h.UpperBounds))
	if p95.AtLeast {
		src += fmt.Sprintf("; beyond the highest finite bucket (%g s), the p95 is a lower bound", p95.Seconds)
	}
	return &rundir.PoolTimeQuantiles{P50: p50, P95: p95, Observations: h.Count, Buckets: len(h.UpperBounds), Source: src}
}

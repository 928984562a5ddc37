package rundir

import "slices"

// Histogram is a cumulative histogram as a Prometheus exporter gives it
// (its _bucket series), with the bounds in seconds: Cumulative[i]
// observations were at most UpperBounds[i], ascending and all finite;
// Count is every observation (the +Inf bucket, the _count). The counts
// are the exporter's counters since it started, not deltas.
type Histogram struct {
	UpperBounds []float64 `json:"le"`
	Cumulative  []float64 `json:"cumulative"`
	Count       float64   `json:"count"`
}

// Clone returns a copy of h that shares nothing with it (nil for nil).
func (h *Histogram) Clone() *Histogram {
	if h == nil {
		return nil
	}
	return &Histogram{UpperBounds: slices.Clone(h.UpperBounds), Cumulative: slices.Clone(h.Cumulative), Count: h.Count}
}

// SameBounds reports whether h and o have the same buckets: only then
// can their counts be added or subtracted bucket by bucket.
func (h *Histogram) SameBounds(o *Histogram) bool {
	return h != nil && o != nil && slices.Equal(h.UpperBounds, o.UpperBounds)
}

// Plus returns h and o summed bucket by bucket, as two pools (or two
// targets) counted together; nil when either is nil or their bounds
// differ: a bucket of one has no count at the other's bounds, and a sum
// that guessed one would give a percentile nobody measured.
func (h *Histogram) Plus(o *Histogram) *Histogram {
	if !h.SameBounds(o) {
		return nil
	}
	out := h.Clone()
	for i, c := range o.Cumulative {
		out.Cumulative[i] += c
	}
	out.Count += o.Count
	return out
}

// PoolTimeQuantiles are percentiles of a time the service's pool
// measured (its use time or wait time), estimated from the increase of
// its histogram's buckets over the run: an estimate, bounded by the edges
// of the bucket each falls in.
type PoolTimeQuantiles struct {
	P50 PoolTimeQuantile `json:"p50"`
	P95 PoolTimeQuantile `json:"p95"`
	// Observations: how many times the histogram counted over the run
	// (checkouts for the use time, acquires for the wait time); Buckets
	// its finite buckets.
	Observations float64 `json:"observations"`
	Buckets      int     `json:"buckets"`
	// Source says where the figures come from and how they were
	// estimated, in words.
	Source string `json:"source"`
}

// PoolTimeQuantile is one percentile: Seconds, interpolated linearly
// within the bucket from BucketLowSeconds to BucketHighSeconds. AtLeast:
// it fell in the +Inf bucket, beyond the highest finite bound, and
// Seconds is that bound — a lower bound, nothing more (BucketHighSeconds
// is then absent).
type PoolTimeQuantile struct {
	Seconds           float64 `json:"seconds"`
	BucketLowSeconds  float64 `json:"bucket_low_seconds"`
	BucketHighSeconds float64 `json:"bucket_high_seconds,omitempty"`
	AtLeast           bool    `json:"at_least,omitempty"`
}

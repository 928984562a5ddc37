package plots

import (
	"gonum.org/v1/plot/plotter"
)

// plotBuckets is how many time buckets a line keeps at most: a panel's
// data area is about 850 pixels wide in the PNGs (6.5 in at 150 dpi, less
// the axis), so a bucket is about a pixel, and a day of 100 ms samples
// (864,000 points) draws with at most 4,000.
const plotBuckets = 1000

// thinner thins a line, point by point, for drawing: when it has more
// points than four per bucket it keeps, of each of plotBuckets equal time
// buckets, the first, lowest, highest and last point, in time order (the
// M4 aggregation of Jugel et al., VLDB 2014). The line drawn through them
// covers the same pixels as the line through every point: a spike of one
// sample still reaches its height and a drop its depth. A short line is
// kept whole.
type thinner struct {
	x0, width float64 // of a bucket; width 0: keep every point
	out       plotter.XYs

	open                bool
	bucket              int
	first, lo, hi, last plotter.XY
}

// newThinner thins a line of up to n points with x in [x0, x1].
func newThinner(x0, x1 float64, n int) *thinner {
	t := &thinner{x0: x0}
	if n > 4*plotBuckets && x1 > x0 {
		t.width = (x1 - x0) / plotBuckets
		t.out = make(plotter.XYs, 0, 4*plotBuckets+4)
	} else {
		t.out = make(plotter.XYs, 0, n)
	}
	return t
}

func (t *thinner) add(p plotter.XY) {
	if t.width == 0 {
		t.out = append(t.out, p)
		return
	}
	b := int((p.X - t.x0) / t.width)
	if !t.open || b != t.bucket {
		t.flush()
		t.open, t.bucket = true, b
		t.first, t.lo, t.hi, t.last = p, p, p, p
		return
	}
	if p.Y < t.lo.Y {
		t.lo = p
	}
	if p.Y > t.hi.Y {
		t.hi = p
	}
	t.last = p
}

// flush writes the open bucket's points in the order they came.
func (t *thinner) flush() {
	if !t.open {
		return
	}
	t.open = false
	pts := [4]plotter.XY{t.first, t.lo, t.hi, t.last}
	if t.hi.X < t.lo.X {
		pts[1], pts[2] = t.hi, t.lo
	}
	for i, p := range pts {
		if i > 0 && p == pts[i-1] {
			continue
		}
		t.out = append(t.out, p)
	}
}

// done returns the thinned line.
func (t *thinner) done() plotter.XYs {
	t.flush()
	return t.out
}

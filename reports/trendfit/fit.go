// Package trendfit fits a straight line to a resource's series over time —
// slope per hour and R² — for leakbench soak's verdicts. It is a leaf: it
// knows nothing of run directories, and keeps one point a second, not one
// a sample.
//
//	var s trendfit.Series
//	s.Add(t0, 10)
//	s.Add(t0.Add(time.Minute), 11)
//	f := s.Fit() // f.PerHour() == 60
package trendfit

import (
	"math"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Fit is a least-squares line y = Intercept + Slope·x, x in seconds from
// the series' origin.
type Fit struct {
	// N is how many points it was fitted to.
	N int
	// Slope is per second; Intercept the value at x = 0.
	Slope, Intercept float64
	// R2 is the coefficient of determination: 1 a perfect line, 0 no
	// better than the mean. A series that does not vary at all has R² 0
	// and slope 0.
	R2 float64
}

// PerHour is the slope per hour.
func (f Fit) PerHour() float64 { return f.Slope * 3600 }

// At is the line's value x seconds from the origin.
func (f Fit) At(x float64) float64 { return f.Intercept + f.Slope*x }

// Line fits xs, ys (equal lengths) by ordinary least squares with gonum's
// stat.LinearRegression. Fewer than two points, or points all at one x,
// give a Fit with N set and nothing else.
func Line(xs, ys []float64) Fit {
	f := Fit{N: len(xs)}
	if len(xs) < 2 || len(xs) != len(ys) {
		return f
	}
	if stat.Variance(xs, nil) == 0 {
		return f
	}
	f.Intercept, f.Slope = stat.LinearRegression(xs, ys, nil, false)
	if stat.Variance(ys, nil) > 0 {
		f.R2 = stat.RSquared(xs, ys, nil, f.Intercept, f.Slope)
	} else {
		f.Slope = 0 // a constant series: flat, whatever rounding says
	}
	if math.IsNaN(f.R2) {
		f.R2 = 0
	}
	return f
}

// Series accumulates a resource's readings as one point a second — the
// mean of the readings within each whole second from Origin — so that a
// long soak sampled ten times a second keeps 3,600 points an hour.
type Series struct {
	// Origin is x = 0; the first Add sets it when zero.
	Origin time.Time
	xs, ys []float64
	sec    int64
	sum    float64
	n      int
}

// Add records a reading taken at t. Readings must come in time order;
// one earlier than the current second is folded into it.
func (s *Series) Add(t time.Time, v float64) {
	if s.Origin.IsZero() {
		s.Origin = t
	}
	sec := int64(math.Floor(t.Sub(s.Origin).Seconds()))
	if s.n > 0 && sec > s.sec {
		s.flush()
	}
	if s.n == 0 || sec > s.sec {
		s.sec = sec
	}
	s.sum += v
	s.n++
}

func (s *Series) flush() {
	if s.n == 0 {
		return
	}
	s.xs = append(s.xs, float64(s.sec))
	s.ys = append(s.ys, s.sum/float64(s.n))
	s.sum, s.n = 0, 0
}

// Points returns the one-second points so far: x in seconds from Origin,
// y the mean reading of that second. The slices are the series' own.
func (s *Series) Points() (xs, ys []float64) {
	s.flush()
	return s.xs, s.ys
}

// Between returns the points with from ≤ x < to (seconds from Origin).
func (s *Series) Between(from, to float64) (xs, ys []float64) {
	all, vals := s.Points()
	for i, x := range all {
		if x >= from && x < to {
			xs = append(xs, x)
			ys = append(ys, vals[i])
		}
	}
	return xs, ys
}

// Mean is the mean of ys; NaN when empty.
func Mean(ys []float64) float64 {
	if len(ys) == 0 {
		return math.NaN()
	}
	return stat.Mean(ys, nil)
}

package trendfit

import (
	"testing"
	"time"
)

// TestSeries checks that readings become one point a second, their mean,
// and that a fit over them gives the slope per hour.
func TestSeries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Series
	for i := range 600 { // ten readings a second for a minute: +1 a minute
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		s.Add(at, at.Sub(t0).Minutes())
	}
	xs, ys := s.Points()
	if len(xs) != 60 {
		t.Fatalf("%d points, want 60 (one a second)", len(xs))
	}
	if f := Line(xs, ys); f.PerHour() < 59.99 || f.PerHour() > 60.01 || f.R2 < 0.999 {
		t.Errorf("slope %.3f/hour R² %.4f, want 60/hour, R² 1", f.PerHour(), f.R2)
	}
	bx, _ := s.Between(10, 20)
	if len(bx) != 10 || bx[0] != 10 {
		t.Errorf("Between(10, 20): %v, want 10 points from 10", bx)
	}
}

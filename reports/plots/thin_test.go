package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestThinner: a day of 100 ms samples thins to at most four points a
// bucket, in time order, and keeps the first and last points, a one-sample
// spike and a one-sample drop; a short line is kept whole.
func TestThinner(t *testing.T) {
	const n = 864_000
	line := func(i int) plotter.XY {
		y := 10 + math.Sin(float64(i)/5000)
		switch i {
		case 123_457:
			y = 500 // spike
		case 700_001:
			y = -3 // drop
		}
		return plotter.XY{X: float64(i) / 10, Y: y}
	}
	th := newThinner(0, float64(n-1)/10, n)
	for i := range n {
		th.add(line(i))
	}
	out := th.done()
	if len(out) > 4*plotBuckets+4 || len(out) < 2*plotBuckets {
		t.Fatalf("%d points, want at most %d", len(out), 4*plotBuckets+4)
	}
	if out[0] != line(0) || out[len(out)-1] != line(n-1) {
		t.Errorf("first %v last %v, want %v and %v", out[0], out[len(out)-1], line(0), line(n-1))
	}
	var spike, drop bool
	for i, p := range out {
		if i > 0 && p.X <= out[i-1].X {
			t.Fatalf("point %d at x %g after %g", i, p.X, out[i-1].X)
		}
		spike = spike || p == line(123_457)
		drop = drop || p == line(700_001)
	}
	if !spike || !drop {
		t.Errorf("spike kept %v, drop kept %v", spike, drop)
	}

	th = newThinner(0, 399.9, 4000)
	for i := range 4000 {
		th.add(line(i))
	}
	if out := th.done(); len(out) != 4000 {
		t.Errorf("a line of 4000 points kept %d", len(out))
	}
}

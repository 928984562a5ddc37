// Package schedule turns a scenario's stages into when things happen: the
// instants a ramping-vus scenario's user count changes (Ramp), and when
// each iteration of an arrival-rate scenario is due (Constant, Ramping) —
// k6's executors' arithmetic, with no clock of its own: the engine sleeps
// until the offsets these return.
package schedule

import (
	"math"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// Step is a change of the number of users at an offset from the start.
type Step struct {
	At    time.Duration
	Users int
}

// Ramp turns stages into the instants the user count changes.
// Going up, a stage starts its first new user at once and the others evenly
// after it; going down, users leave evenly, the last at the stage's end.
func Ramp(start int, stages []plan.Stage) []Step {
	steps := []Step{{0, start}}
	cur, t := start, time.Duration(0)
	for _, st := range stages {
		a, b, d := cur, st.Target, st.Duration.D()
		switch {
		case d <= 0:
			steps = append(steps, Step{t, b})
		case b > a:
			for k := a + 1; k <= b; k++ {
				steps = append(steps, Step{t + d*time.Duration(k-1-a)/time.Duration(b-a), k})
			}
		case b < a:
			for k := a - 1; k >= b; k-- {
				steps = append(steps, Step{t + d*time.Duration(a-k)/time.Duration(a-b), k})
			}
		}
		cur, t = b, t+max(d, 0)
	}
	return steps
}

// Pacer decides when the iterations of an arrival-rate scenario are due:
// At returns the offset from the start of iteration n (from 0), and false
// when there is none.
type Pacer interface {
	At(n int64) (time.Duration, bool)
}

// pacerFunc adapts a function to a Pacer.
type pacerFunc func(n int64) (time.Duration, bool)

// At calls f.
func (f pacerFunc) At(n int64) (time.Duration, bool) { return f(n) }

// Constant paces rate iterations per timeUnit, evenly.
func Constant(rate int, timeUnit time.Duration) Pacer {
	return pacerFunc(func(n int64) (time.Duration, bool) {
		if rate <= 0 || timeUnit <= 0 {
			return 0, false
		}
		r := int64(rate)
		return time.Duration(n/r)*timeUnit + time.Duration(n%r)*timeUnit/time.Duration(r), true
	})
}

// Ramping paces a rate (iterations per timeUnit) that moves linearly
// from startRate through each stage's target, as k6's
// ramping-arrival-rate: iteration n is due when the integral of the rate
// reaches n.
func Ramping(startRate int, timeUnit time.Duration, stages []plan.Stage) Pacer {
	type seg struct {
		t0, d      float64 // seconds
		r0, r1     float64 // per second
		c0, c1     float64 // cumulative iterations at the ends
		zeroLength bool
	}
	var segs []seg
	per := timeUnit.Seconds()
	t, c, r := 0.0, 0.0, float64(startRate)/per
	for _, st := range stages {
		d := st.Duration.D().Seconds()
		r1 := float64(st.Target) / per
		s := seg{t0: t, d: d, r0: r, r1: r1, c0: c, zeroLength: d <= 0}
		c += (r + r1) / 2 * d
		s.c1 = c
		segs = append(segs, s)
		t, r = t+d, r1
	}
	return pacerFunc(func(n int64) (time.Duration, bool) {
		x := float64(n)
		for _, s := range segs {
			if s.zeroLength || x >= s.c1 || (s.c1 == s.c0) {
				continue
			}
			k := x - s.c0 // iterations into this segment
			a, b := s.r0, (s.r1-s.r0)/s.d
			var dt float64
			if b == 0 {
				dt = k / a
			} else {
				dt = (-a + math.Sqrt(max(a*a+2*b*k, 0))) / b
			}
			return time.Duration((s.t0 + min(max(dt, 0), s.d)) * float64(time.Second)), true
		}
		return 0, false
	})
}

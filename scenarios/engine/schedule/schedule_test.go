package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
)

func TestRampSchedule(t *testing.T) {
	s := func(d time.Duration, target int) plan.Stage {
		return plan.Stage{Duration: plan.Duration(d), Target: target}
	}
	tests := []struct {
		name   string
		start  int
		stages []plan.Stage
		want   string
	}{
		{"up from 0", 0, []plan.Stage{s(4*time.Second, 4)}, "[0s:0 0s:1 1s:2 2s:3 3s:4]"},
		{"hold then down", 2, []plan.Stage{s(time.Second, 2), s(2*time.Second, 0)}, "[0s:2 2s:1 3s:0]"},
		{"instant jump", 1, []plan.Stage{s(0, 3), s(time.Second, 3)}, "[0s:1 0s:3]"},
		{"up and down", 0, []plan.Stage{s(2*time.Second, 2), s(2*time.Second, 0)}, "[0s:0 0s:1 1s:2 3s:1 4s:0]"},
	}
	for _, tt := range tests {
		got := fmtSteps(Ramp(tt.start, tt.stages))
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func fmtSteps(steps []Step) string {
	out := "["
	for i, s := range steps {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s:%d", s.At, s.Users)
	}
	return out + "]"
}

// count returns how many iterations p makes due before d.
func count(p Pacer, d time.Duration) int {
	n := 0
	for ; n < 1_000_000; n++ {
		at, ok := p.At(int64(n))
		if !ok || at >= d {
			break
		}
	}
	return n
}

func TestPacers(t *testing.T) {
	c := Constant(3, time.Second)
	if at, _ := c.At(4); at != time.Second+time.Second/3 {
		t.Errorf("constant: iteration 4 at %s", at)
	}
	if n := count(c, 10*time.Second); n != 30 {
		t.Errorf("constant 3/s over 10s: %d iterations", n)
	}
	s := func(d time.Duration, target int) plan.Stage {
		return plan.Stage{Duration: plan.Duration(d), Target: target}
	}
	tests := []struct {
		name   string
		start  int
		unit   time.Duration
		stages []plan.Stage
		want   int // iterations over the whole schedule
	}{
		{"flat", 10, time.Second, []plan.Stage{s(5*time.Second, 10)}, 50},
		{"ramp up", 0, time.Second, []plan.Stage{s(10*time.Second, 10)}, 50},
		{"ramp down", 10, time.Second, []plan.Stage{s(10*time.Second, 0)}, 50},
		{"per minute", 60, time.Minute, []plan.Stage{s(30*time.Second, 60)}, 30},
		{"zero gap", 0, time.Second, []plan.Stage{s(2*time.Second, 0), s(0, 4), s(2*time.Second, 4)}, 8},
	}
	for _, tt := range tests {
		p := Ramping(tt.start, tt.unit, tt.stages)
		var total time.Duration
		for _, st := range tt.stages {
			total += st.Duration.D()
		}
		if n := count(p, total+time.Hour); n < tt.want-1 || n > tt.want {
			t.Errorf("%s: %d iterations, want %d", tt.name, n, tt.want)
		}
		prev := time.Duration(-1)
		for i := range int64(tt.want) {
			at, ok := p.At(i)
			if !ok {
				break
			}
			if at < prev || at > total {
				t.Errorf("%s: iteration %d at %s after %s (total %s)", tt.name, i, at, prev, total)
				break
			}
			prev = at
		}
	}
	// A leading flat zero stage delays the first iteration.
	if at, ok := Ramping(0, time.Second, []plan.Stage{s(2*time.Second, 0), s(2*time.Second, 4)}).At(0); !ok || at != 2*time.Second {
		t.Errorf("first iteration at %s, %v; want 2s", at, ok)
	}
}

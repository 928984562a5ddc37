package soak

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/trendfit"
)

// points makes one point a second from 0 to end with f(x) plus noise.
func points(end int, seed int64, noise float64, f func(x float64) float64) (xs, ys []float64) {
	rng := rand.New(rand.NewSource(seed))
	for x := 0; x <= end; x++ {
		xs = append(xs, float64(x))
		ys = append(ys, f(float64(x))+noise*(rng.Float64()-0.5))
	}
	return xs, ys
}

func TestJudge(t *testing.T) {
	set := Defaults(rundir.SoakSettings{})
	// baseline 0–10 s, load 10–250 s (steady from 40 s), cool-down to 310 s.
	w := window{loadStart: 10, steadyStart: 40, loadEnd: 250, coolDownEnd: 310}
	leak := func(x float64) float64 { // +0.1 a second under load, kept after it
		switch {
		case x < 10:
			return 2
		case x < 250:
			return 2 + 0.1*(x-10)
		}
		return 26
	}
	backlog := func(x float64) float64 { // grows under load, released in the cool-down
		if x >= 10 && x < 250 {
			return 2 + 0.1*(x-10)
		}
		return 2
	}
	steady := func(x float64) float64 {
		if x >= 10 && x < 250 {
			return 12
		}
		return 2
	}
	cases := []struct {
		name    string
		end     int
		w       window
		noise   float64
		f       func(float64) float64
		never   string
		verdict string
		reason  string
	}{
		{"leak", 310, w, 1, leak, "", Growing, ""},
		{"backlog released", 310, w, 1, backlog, "", Recovered, ""},
		{"steady pool", 310, w, 3, steady, "", Flat, ""},
		{"noise only", 310, w, 4, func(float64) float64 { return 5 }, "", Flat, ""},
		{"too short", 60, window{loadStart: 10, steadyStart: 40, loadEnd: 55, coolDownEnd: 60}, 1, leak, "", NotJudged, "points in the steady window"},
		{"never sampled", 0, w, 0, leak, "PgBouncer was never sampled", NotJudged, "PgBouncer was never sampled"},
		{"no cool-down", 250, window{loadStart: 10, steadyStart: 40, loadEnd: 250, coolDownEnd: 250}, 1, leak, "", NotJudged, "no cool-down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var xs, ys []float64
			if c.never == "" {
				xs, ys = points(c.end, 1, c.noise, c.f)
			}
			r := judge("connections (svc)", "connections", xs, ys, c.w, set, c.never)
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %q (%s), want %q", r.Verdict, r.Line, c.verdict)
			}
			if c.reason != "" && !strings.Contains(r.Reason, c.reason) {
				t.Errorf("reason %q, want it to say %q", r.Reason, c.reason)
			}
			if c.verdict == Growing && (!strings.HasPrefix(r.Line, "growing: +") || !strings.Contains(r.Line, "not recovered in cool-down")) {
				t.Errorf("line %q, want \"growing: +N connections/hour (R² …), not recovered in cool-down\"", r.Line)
			}
			if c.verdict == NotJudged && strings.Contains(r.Line, Flat+":") {
				t.Errorf("a resource not judged reads as flat: %q", r.Line)
			}
		})
	}
}

func TestJudgeSlope(t *testing.T) {
	w := window{loadStart: 10, steadyStart: 40, loadEnd: 250, coolDownEnd: 310}
	xs, ys := points(310, 2, 0, func(x float64) float64 { return 1 + x/100 }) // 36/hour exactly
	r := judge("c", "connections", xs, ys, w, Defaults(rundir.SoakSettings{}), "")
	if r.SlopePerHour < 35.99 || r.SlopePerHour > 36.01 || r.R2 < 0.999 {
		t.Errorf("slope %.3f/hour R² %.3f, want 36/hour R² 1", r.SlopePerHour, r.R2)
	}
	// A threshold above the slope makes it flat.
	r = judge("c", "connections", xs, ys, w, Defaults(rundir.SoakSettings{Slopes: map[string]float64{"connections": 40}}), "")
	if r.Verdict != Flat {
		t.Errorf("slope 36/hour against a threshold of 40: %q, want flat", r.Line)
	}
}

func TestLine(t *testing.T) {
	cases := []struct {
		name      string
		xs, ys    []float64
		slope, r2 float64
	}{
		{"line", []float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}, 2, 1},
		{"constant", []float64{0, 1, 2}, []float64{4, 4, 4}, 0, 0},
		{"one point", []float64{0}, []float64{4}, 0, 0},
		{"one x", []float64{1, 1}, []float64{1, 2}, 0, 0},
	}
	for _, c := range cases {
		f := trendfit.Line(c.xs, c.ys)
		if d := f.Slope - c.slope; d > 1e-9 || d < -1e-9 || f.R2-c.r2 > 1e-9 || c.r2-f.R2 > 1e-9 {
			t.Errorf("%s: slope %g R² %g, want %g, %g", c.name, f.Slope, f.R2, c.slope, c.r2)
		}
	}
}

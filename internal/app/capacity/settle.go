package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// riseLimit is how much the last third of a stage's seconds may carry
// more requests than the middle third before the stage is judged not
// settled: the load still climbing when the stage ended. A rise must also
// stand out of the counting noise (riseSigmas standard deviations of a
// Poisson count) so that a few requests a second do not read as a climb.
const (
	riseLimit  = 1.25
	riseSigmas = 3
)

// settled reports whether the stage's load had settled: its request rate
// over the last third of the hold no more than riseLimit × that of the
// middle third, or within the noise of counting them. The first second
// (users starting) and seconds past the hold (graceful stop) are left out.
// Rates are requests over the time they were counted in, not averages of
// the per-second rates: a sliver of an interval at the end (a late tick on
// a loaded machine) has a per-second rate of a few requests over a few
// milliseconds, which would read as a climb. why says what was seen when
// not settled.
func settled(points []rundir.LoadPoint, stage time.Duration) (ok bool, why string) {
	type interval struct {
		seconds  float64
		requests float64
	}
	var ivs []interval
	prev := 0.0
	for _, p := range points {
		d := p.ElapsedSeconds - prev
		if p.ElapsedSeconds > 1 && p.ElapsedSeconds <= stage.Seconds()+0.01 && d > 0 {
			n := float64(p.Requests)
			if n == 0 && p.ReqPerSecond > 0 {
				n = p.ReqPerSecond * d // a point that carries only its rate
			}
			ivs = append(ivs, interval{d, n})
		}
		prev = p.ElapsedSeconds
	}
	if len(ivs) < 3 {
		return false, fmt.Sprintf("only %d whole seconds of load were recorded in a %s stage: hold stages longer", len(ivs), stage)
	}
	rate := func(ivs []interval) (perSecond, requests, seconds float64) {
		for _, iv := range ivs {
			requests += iv.requests
			seconds += iv.seconds
		}
		return requests / seconds, requests, seconds
	}
	n := len(ivs) / 3
	mid, _, _ := rate(ivs[n : len(ivs)-n])
	last, got, lastSeconds := rate(ivs[len(ivs)-n:])
	if last == 0 && mid == 0 {
		return false, "no request was sent in the stage's second half: think times longer than the stage? hold stages longer"
	}
	// The last third's requests against what the middle third's rate
	// predicts for as long.
	want := mid * lastSeconds
	if last > riseLimit*mid && got-want > riseSigmas*math.Sqrt(want+1) {
		return false, fmt.Sprintf("the load was still climbing at the end of the stage (%.1f req/s, then %.1f req/s): hold stages longer (--stage)", mid, last)
	}
	return true, ""
}

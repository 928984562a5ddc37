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

// settled reports whether the stage's load had settled: its requests per
// second over the last third of the hold no more than riseLimit × those
// of the middle third, or within the noise of counting them. The first second (users starting) and seconds past
// the hold (graceful stop) are left out. why says what was seen when not.
func settled(points []rundir.LoadPoint, stage time.Duration) (ok bool, why string) {
	var rates []float64
	for _, p := range points {
		if p.ElapsedSeconds > 1 && p.ElapsedSeconds <= stage.Seconds()+0.01 {
			rates = append(rates, p.ReqPerSecond)
		}
	}
	if len(rates) < 3 {
		return false, fmt.Sprintf("only %d whole seconds of load were recorded in a %s stage: hold stages longer", len(rates), stage)
	}
	n := len(rates) / 3
	mid, last := mean(rates[n:len(rates)-n]), mean(rates[len(rates)-n:])
	if last == 0 && mid == 0 {
		return false, "no request was sent in the stage's second half: think times longer than the stage? hold stages longer"
	}
	// The last third's requests against what the middle third's rate
	// predicts for as many seconds.
	want, got := mid*float64(n), last*float64(n)
	if last > riseLimit*mid && got-want > riseSigmas*math.Sqrt(want+1) {
		return false, fmt.Sprintf("the load was still climbing at the end of the stage (%.1f req/s, then %.1f req/s): hold stages longer (--stage)", mid, last)
	}
	return true, ""
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

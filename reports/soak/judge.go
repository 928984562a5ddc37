package soak

import (
	"fmt"
	"math"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/trendfit"
)

// window is a soak's phases in seconds from the baseline's start.
type window struct {
	loadStart, steadyStart, loadEnd, coolDownEnd float64
}

// endSpan is the end of the cool-down whose mean is a resource's End.
const endSpan = 10.0

// Judge judges one resource of kind k from its one-second points (x in
// seconds from the baseline's start, in order) over the phases w. never,
// when not empty, says why the resource was never sampled.
func judge(name, k string, xs, ys []float64, w window, s rundir.SoakSettings, never string) rundir.SoakResource {
	kd := kinds[k]
	r := rundir.SoakResource{Name: name, Kind: k, Unit: kd.unit, ThresholdPerHour: threshold(s, k)}
	notJudged := func(reason string) rundir.SoakResource {
		r.Verdict, r.Reason = NotJudged, reason
		r.Line = NotJudged + ": " + reason
		return r
	}
	if never != "" || len(xs) == 0 {
		if never == "" {
			never = "never sampled"
		}
		return notJudged(never)
	}
	var sx, sy []float64
	var by, ey []float64
	for i, x := range xs {
		switch {
		case x < w.loadStart:
			by = append(by, ys[i])
		case x >= w.steadyStart && x < w.loadEnd:
			sx, sy = append(sx, x), append(sy, ys[i])
		case x >= w.loadEnd && x >= w.coolDownEnd-endSpan && x <= w.coolDownEnd:
			ey = append(ey, ys[i])
		}
	}
	r.Points = len(sx)
	if len(by) > 0 {
		b := trendfit.Mean(by)
		r.Baseline = &b
	}
	if len(ey) > 0 {
		e := trendfit.Mean(ey)
		r.End = &e
	}
	if len(sx) < s.MinPoints {
		return notJudged(fmt.Sprintf("%d one-second points in the steady window, %d needed: the soak is too short, or the resource was sampled too rarely", len(sx), s.MinPoints))
	}
	f := trendfit.Line(sx, sy)
	r.SlopePerHour, r.R2 = f.PerHour(), f.R2
	r.SteadyStart, r.SteadyEnd = f.At(w.steadyStart), f.At(w.loadEnd)
	slope := fmt.Sprintf("%s/hour (R² %.2f)", signed(r.SlopePerHour, kd), r.R2)
	if w.coolDownEnd <= w.loadEnd {
		return notJudged("no cool-down, so a climb cannot be told from what the load itself holds; fit " + slope)
	}
	if r.End == nil {
		return notJudged("no sample in the cool-down's last 10 s; fit " + slope)
	}
	start := r.SteadyStart
	if r.Baseline != nil {
		start = max(start, *r.Baseline)
	}
	back := *r.End <= start+kd.floor
	r.Recovered = &back
	rise := r.SteadyEnd - r.SteadyStart
	grows := r.SlopePerHour > r.ThresholdPerHour && r.R2 >= s.MinR2 && rise >= kd.floor
	ends := fmt.Sprintf("baseline %s, end of cool-down %s", value(r.Baseline, kd), value(r.End, kd))
	switch {
	case grows && !back:
		r.Verdict = Growing
		r.Line = fmt.Sprintf("growing: %s, not recovered in cool-down (%s)", slope, ends)
	case grows:
		r.Verdict = Recovered
		r.Line = fmt.Sprintf("recovered: grew %s, back in cool-down (%s)", slope, ends)
	default:
		r.Verdict = Flat
		r.Line = fmt.Sprintf("flat: %s, threshold %s/hour (%s)", slope, signed(r.ThresholdPerHour, kd), ends)
	}
	return r
}

// signed formats a slope with its sign, bytes in MiB.
func signed(v float64, k kind) string {
	if k.bytes {
		return fmt.Sprintf("%+.1f MiB", v/(1<<20))
	}
	if math.Abs(v) >= 10 {
		return fmt.Sprintf("%+.0f %s", v, k.unit)
	}
	return fmt.Sprintf("%+.1f %s", v, k.unit)
}

// value formats a level, "–" when absent.
func value(v *float64, k kind) string {
	switch {
	case v == nil:
		return "–"
	case k.bytes:
		return fmt.Sprintf("%.1f MiB", *v/(1<<20))
	default:
		return fmt.Sprintf("%.1f", *v)
	}
}

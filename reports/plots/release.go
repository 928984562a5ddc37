package plots

import (
	"image/color"
	"math"
	"strconv"

	"github.com/leakbench/leakbench/reports/internal/format"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Release-latency bins: binsPerDecade per power of ten, on one grid for
// every run so that a comparison's bars line up. Holds below minHold (the
// probe cannot time them anyway) count in the first bin.
const (
	binsPerDecade = 5
	minHold       = 1e-4
	// logBase is where bars start on the log-scale count axis: below 1,
	// so that a bin with a single episode still shows.
	logBase = 0.6
)

func binOf(hold float64) int {
	return int(math.Floor(math.Log10(max(hold, minHold)) * binsPerDecade))
}

func binEdge(k int) float64 { return math.Pow(10, float64(k)/binsPerDecade) }

func releasePanel(r *Run) *panel {
	p := newPanel("Connection release latency", "time held idle in transaction (log scale)", "episodes (log scale)")
	p.logY = true
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = durationTicks{}, countTicks{}
	p.Y.Min = logBase
	if len(r.Episodes) == 0 {
		p.X.Min, p.X.Max = 1e-3, 10
		p.Y.Max = 10
		return empty(p, "no idle-in-transaction episode recorded")
	}
	stuckAfter, timeout := 0.0, r.Summary.Environment.IdleInTxTimeoutSeconds
	if pr := r.Summary.Probe; pr != nil {
		stuckAfter = pr.StuckAfterSeconds
		timeout = max(timeout, pr.IdleInTxTimeoutSeconds)
	}
	// Every episode was binned as it was read (Run.Episodes may hold only
	// the worst).
	bins := r.Holds
	if bins == nil || bins.stuckAfter != stuckAfter {
		bins = NewHolds(stuckAfter)
		for i := range r.Episodes {
			bins.Add(r.Episodes[i].HoldSeconds)
		}
	}
	h := &bins.h
	p.Add(h)
	p.addLegend("released", swatch{colBlue})
	if len(h.stuck) > 0 {
		p.addLegend("stuck (held ≥ "+format.Seconds(stuckAfter)+")", swatch{colVermilion})
	}
	if stuckAfter > 0 {
		v := vline{x: stuckAfter, style: lineStyle(colGrey, 1.25, dashDotted)}
		p.Add(v)
		p.addLegend("stuck threshold "+format.Seconds(stuckAfter), v)
	}
	if timeout > 0 {
		v := vline{x: timeout, style: lineStyle(colBlack, 1.5, dashDashed)}
		p.Add(v)
		p.addLegend("idle_in_transaction_session_timeout "+format.Seconds(timeout), v)
	}
	// Whole decades, so the axis reads 1 ms … 10 s.
	p.X.Min = math.Pow(10, math.Floor(math.Log10(p.X.Min)))
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(p.X.Max*1.001)))
	return p
}

// Holds is the release-latency histogram of a run's episodes, binned as
// they are read, stuck ones (held ≥ stuckAfter, when above 0) apart: what
// the release plot draws of a run whose Episodes hold only some of them.
type Holds struct {
	stuckAfter float64
	h          histogram
}

// NewHolds starts the histogram of a run whose stuck threshold is
// stuckAfter seconds (0: none).
func NewHolds(stuckAfter float64) *Holds {
	return &Holds{stuckAfter: stuckAfter, h: histogram{released: map[int]int{}, stuck: map[int]int{}, lo: math.MaxInt, hi: math.MinInt}}
}

// Add bins one episode's hold, in seconds.
func (b *Holds) Add(hold float64) {
	k := binOf(hold)
	if b.stuckAfter > 0 && hold >= b.stuckAfter {
		b.h.stuck[k]++
	} else {
		b.h.released[k]++
	}
	b.h.lo, b.h.hi = min(b.h.lo, k), max(b.h.hi, k)
}

// histogram draws release-latency bars: the released episodes of a bin at
// the bottom, the stuck ones stacked on top in red.
type histogram struct {
	released, stuck map[int]int
	lo, hi          int
}

func (h *histogram) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	gap := vg.Points(0.75)
	for k := h.lo; k <= h.hi; k++ {
		x0, x1 := trX(binEdge(k))+gap, trX(binEdge(k+1))-gap
		base := logBase
		for _, part := range []struct {
			n   int
			col color.Color
		}{{h.released[k], colBlue}, {h.stuck[k], colVermilion}} {
			if part.n == 0 {
				continue
			}
			top := float64(part.n)
			if base > logBase {
				top += base
			}
			y0, y1 := trY(base), trY(top)
			pts := c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			if len(pts) > 0 {
				c.FillPolygon(part.col, pts)
			}
			base = top
		}
	}
}

func (h *histogram) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymax = 1
	for k := h.lo; k <= h.hi; k++ {
		ymax = max(ymax, float64(h.released[k]+h.stuck[k]))
	}
	return binEdge(h.lo), binEdge(h.hi + 1), logBase, ymax
}

// swatch is a filled legend entry.
type swatch struct{ col color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.col, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// durationTicks labels a log-scale seconds axis with durations.
type durationTicks struct{}

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		d := math.Pow(10, e)
		ticks = append(ticks, plot.Tick{Value: d, Label: durationLabel(d)})
		for i := 2; i < 10; i++ {
			ticks = append(ticks, plot.Tick{Value: d * float64(i)})
		}
	}
	return ticks
}

func durationLabel(s float64) string {
	switch {
	case s >= 0.999:
		return strconv.FormatFloat(math.Round(s), 'f', -1, 64) + " s"
	case s >= 0.000999:
		return strconv.FormatFloat(math.Round(s*1e3), 'f', -1, 64) + " ms"
	default:
		return strconv.FormatFloat(math.Round(s*1e6), 'f', -1, 64) + " µs"
	}
}

// countTicks labels a log-scale count axis at 1, 10, 100, …
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for d := 1.0; d <= hi*10; d *= 10 {
		ticks = append(ticks, plot.Tick{Value: d, Label: strconv.FormatFloat(math.Round(d), 'f', -1, 64)})
		for i := 2; i < 10; i++ {
			ticks = append(ticks, plot.Tick{Value: d * float64(i)})
		}
	}
	return ticks
}

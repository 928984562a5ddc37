package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CapacityFile is the stem of a capacity search's curve.
const CapacityFile = "capacity"

// CapacityPoint is one stage of a capacity search, for the curve: its
// load and what it measured. Zero values are drawn as zero; a stage whose
// probe did not sample PgBouncer or the database has Probed false and
// draws no connection points.
type CapacityPoint struct {
	Load          float64
	P50Ms         float64
	P95Ms         float64
	P99Ms         float64
	ErrorRate     float64 // 0..1
	ServiceConns  float64 // the service's backends, most at once
	Stuck         float64 // stuck idle in transaction, most at once
	PgBouncerWait float64 // PgBouncer cl_waiting, most at once
	AppPoolPeak   float64 // the service pool's connections in use, most at once (0: no pool metrics)
	ReqPerSecond  float64 // throughput: requests completed a second
	Probed        bool
	Held          bool // the stage held every limit
}

// CapacityCurve is a capacity search's curve: each stage's point and the
// knee — the largest load that held every limit (0: none held).
type CapacityCurve struct {
	Label  string // "fixed", "before (commit-in-finally)"
	Unit   string // "users", "iterations/s"
	Points []CapacityPoint
	Knee   float64
	// Model is a model's throughput at a load, drawn dashed over the
	// measured throughput (nil: none); ModelLabel names it ("USL model:
	// σ 0.05, κ 0.002").
	Model      func(load float64) float64
	ModelLabel string
}

// WriteCapacity draws the curves, one column each, of load against
// throughput (with the model fitted to it, when there is one), latency
// (p50, p95, p99), error rate and the pool's figures, with the knee
// marked; format is PNG or SVG.
func WriteCapacity(w io.Writer, format string, curves ...CapacityCurve) error {
	if len(curves) == 0 {
		return fmt.Errorf("plot %s: %w", CapacityFile, ErrNoData)
	}
	rows := 4
	grid := make([][]*plot.Plot, rows)
	for _, cv := range curves {
		pts := append([]CapacityPoint(nil), cv.Points...)
		sort.Slice(pts, func(i, j int) bool { return pts[i].Load < pts[j].Load })
		xl := "load (" + cv.Unit + ")"
		thr := newPanel("Throughput by load — "+cv.Label, xl, "req/s")
		addCapLine(thr, "measured", pts, func(p CapacityPoint) (float64, bool) { return p.ReqPerSecond, true }, colBlue)
		if cv.Model != nil && len(pts) > 0 {
			addModel(thr, cv.ModelLabel, pts[len(pts)-1].Load, cv.Model)
		}
		lat := newPanel("Latency by load", xl, "ms")
		addCapLine(lat, "p50", pts, func(p CapacityPoint) (float64, bool) { return p.P50Ms, true }, colBlue)
		addCapLine(lat, "p95", pts, func(p CapacityPoint) (float64, bool) { return p.P95Ms, true }, colOrange)
		addCapLine(lat, "p99", pts, func(p CapacityPoint) (float64, bool) { return p.P99Ms, true }, colVermilion)
		errs := newPanel("Error rate", xl, "% of requests")
		addCapLine(errs, "failed", pts, func(p CapacityPoint) (float64, bool) { return 100 * p.ErrorRate, true }, colVermilion)
		pool := newPanel("Pool", xl, "connections / clients")
		addCapLine(pool, "service connections", pts, func(p CapacityPoint) (float64, bool) { return p.ServiceConns, p.Probed }, colBlue)
		addCapLine(pool, "stuck idle in tx", pts, func(p CapacityPoint) (float64, bool) { return p.Stuck, p.Probed }, colVermilion)
		addCapLine(pool, "service pool in use", pts, func(p CapacityPoint) (float64, bool) { return p.AppPoolPeak, p.Probed && p.AppPoolPeak > 0 }, colGreen)
		addCapLine(pool, "PgBouncer waiting", pts, func(p CapacityPoint) (float64, bool) { return p.PgBouncerWait, p.Probed }, colPurple)
		for i, p := range []*panel{thr, lat, errs, pool} {
			if cv.Knee > 0 {
				k := vline{x: cv.Knee, style: lineStyle(colBlack, 1.5, []vg.Length{vg.Points(4), vg.Points(3)})}
				p.Add(k)
				if i == 0 {
					p.Legend.Add(fmt.Sprintf("capacity %g %s", cv.Knee, cv.Unit), k)
				}
			}
			p.Y.Min = 0
			p.Y.Max = max(p.Y.Max, 1) // an all-zero series sits on the axis, not mid-panel
			grid[i] = append(grid[i], p.Plot)
		}
	}
	width := vg.Length(len(curves)) * 6.5 * vg.Inch
	height := vg.Length(rows) * 2.4 * vg.Inch
	c, err := newCanvas(format, width, height)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: rows, Cols: len(curves), PadX: vg.Inch / 3, PadY: vg.Inch / 6,
		PadTop: vg.Inch / 12, PadBottom: vg.Inch / 12, PadLeft: vg.Inch / 12, PadRight: vg.Inch / 6}
	canvases := plot.Align(grid, tiles, dc)
	for i, row := range grid {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", CapacityFile, err)
	}
	out := buf.Bytes()
	if format == SVG {
		out = svgFonts(out)
	}
	_, err = w.Write(out)
	return err
}

// addCapLine draws one series over the stages, a line with a point at
// each stage.
func addCapLine(p *panel, name string, pts []CapacityPoint, y func(CapacityPoint) (float64, bool), col color.Color) {
	var xys plotter.XYs
	for _, pt := range pts {
		if v, ok := y(pt); ok && finite(v) {
			xys = append(xys, plotter.XY{X: pt.Load, Y: v})
		}
	}
	if len(xys) == 0 {
		return
	}
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return
	}
	l.LineStyle = lineStyle(col, 1.5, nil)
	s.Color = col
	s.Shape = draw.CircleGlyph{}
	s.Radius = vg.Points(2.5)
	p.Add(l, s)
	p.addLegend(name, l, s)
}

// addModel draws a model's curve dashed from load 1 to last, sampled
// finely enough to look smooth.
func addModel(p *panel, name string, last float64, model func(float64) float64) {
	var xys plotter.XYs
	const steps = 100
	for i := 0; i <= steps; i++ {
		x := 1 + (last-1)*float64(i)/steps
		if y := model(x); finite(y) {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	if len(xys) < 2 {
		return
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.LineStyle = lineStyle(colOrange, 1.5, []vg.Length{vg.Points(6), vg.Points(3)})
	p.Add(l)
	p.addLegend(name, l)
}

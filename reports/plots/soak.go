package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SoakSeries is one resource of a soak as its plot draws it: its points
// (x in seconds from the load's start), the steady window's fit, and its
// verdict's line for the title.
type SoakSeries struct {
	Title  string
	Xs, Ys []float64
	// Slope (per second) and Intercept of the fit, drawn from SteadyStart
	// to LoadEnd; Fitted false: no line.
	Fitted           bool
	Slope, Intercept float64
	// Growing draws the fit red.
	Growing bool
}

// SoakPhases are the soak's phases in seconds from the load's start: the
// baseline before 0, the warm-up until SteadyStart, the cool-down from
// LoadEnd to CoolDownEnd.
type SoakPhases struct {
	BaselineStart, SteadyStart, LoadEnd, CoolDownEnd float64
}

// WriteSoak draws one panel per series — its points thinned as the run's
// plots are (at most 4,000 drawn per line, a day's points included), its
// fit over the steady window, the warm-up and cool-down shaded — two
// panels a row, as PNG or SVG.
func WriteSoak(w io.Writer, format string, ph SoakPhases, series []SoakSeries) error {
	if len(series) == 0 {
		return fmt.Errorf("soak plot: %w", ErrNoData)
	}
	const cols = 2
	rows := (len(series) + cols - 1) / cols
	panels := make([][]*plot.Plot, rows)
	for i, s := range series {
		p := plot.New()
		p.Title.Text = s.Title
		p.Title.TextStyle.Font.Size = 9
		p.X.Label.Text = "seconds from the load's start"
		p.Add(grid{}, band{from: ph.BaselineStart, to: 0, fill: color.RGBA{R: 230, G: 230, B: 230, A: 255}},
			band{from: 0, to: ph.SteadyStart, fill: color.RGBA{R: 250, G: 240, B: 210, A: 255}},
			band{from: ph.LoadEnd, to: ph.CoolDownEnd, fill: color.RGBA{R: 215, G: 235, B: 250, A: 255}})
		t := newThinner(ph.BaselineStart, ph.CoolDownEnd, len(s.Xs))
		for j, x := range s.Xs {
			t.add(plotter.XY{X: x, Y: s.Ys[j]})
		}
		line, err := plotter.NewLine(t.done())
		if err != nil {
			return fmt.Errorf("soak plot %s: %w", s.Title, err)
		}
		line.LineStyle = lineStyle(color.RGBA{R: 40, G: 90, B: 160, A: 255}, 1, nil)
		p.Add(line)
		if s.Fitted && ph.LoadEnd > ph.SteadyStart {
			fit, err := plotter.NewLine(plotter.XYs{{X: ph.SteadyStart, Y: s.Intercept + s.Slope*ph.SteadyStart}, {X: ph.LoadEnd, Y: s.Intercept + s.Slope*ph.LoadEnd}})
			if err != nil {
				return fmt.Errorf("soak plot %s: %w", s.Title, err)
			}
			c := color.Color(color.RGBA{G: 140, A: 255})
			if s.Growing {
				c = color.RGBA{R: 200, A: 255}
			}
			fit.LineStyle = lineStyle(c, 2, []vg.Length{4, 2})
			p.Add(fit)
		}
		p.X.Min, p.X.Max = ph.BaselineStart, ph.CoolDownEnd
		p.Y.Min = min(p.Y.Min, 0)
		panels[i/cols] = append(panels[i/cols], p)
	}
	for len(panels[rows-1]) < cols {
		panels[rows-1] = append(panels[rows-1], nil)
	}
	rowHeight := 2.2 * vg.Inch
	c, err := newCanvas(format, cols*6*vg.Inch, vg.Length(rows)*rowHeight)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 3, PadY: vg.Inch / 6,
		PadTop: vg.Inch / 12, PadBottom: vg.Inch / 12, PadLeft: vg.Inch / 12, PadRight: vg.Inch / 6}
	canvases := plot.Align(panels, tiles, dc)
	for i, row := range panels {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if format == SVG {
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("soak plot: %w", err)
		}
		_, err = w.Write(svgFonts(buf.Bytes()))
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

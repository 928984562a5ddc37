package trend

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"regexp"

	"github.com/leakbench/leakbench/internal/app/history"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot formats.
const (
	FormatPNG = "png"
	FormatSVG = "svg"
)

// Plot is one trend plot: a few figures of the same unit per entry.
type Plot struct {
	Name    string
	Caption string
	YLabel  string
	Series  []Series
}

// Series is one line of a plot.
type Series struct {
	Label string
	Value func(history.Figures) float64
	// Probe: a figure of the probe (else of the load); entries that did
	// not record it have no point.
	Probe bool
}

// Plots are the trend's plots, in the order the page shows them.
func Plots() []Plot {
	return []Plot{
		{Name: "release", Caption: "Connection release latency (how long sessions sat idle in a transaction) per release", YLabel: "seconds", Series: []Series{
			{"p50", func(f history.Figures) float64 { return f.ReleaseP50Seconds }, true},
			{"p99", func(f history.Figures) float64 { return f.ReleaseP99Seconds }, true},
			{"max", func(f history.Figures) float64 { return f.ReleaseMaxSeconds }, true},
		}},
		{Name: "stuck", Caption: "Sessions stuck idle in transaction per release: most at one instant, episodes, killed by the timeout", YLabel: "sessions / episodes", Series: []Series{
			{"max stuck at once", func(f history.Figures) float64 { return float64(f.MaxStuckIdleInTx) }, true},
			{"stuck episodes", func(f history.Figures) float64 { return float64(f.StuckEpisodes) }, true},
			{"killed by timeout", func(f history.Figures) float64 { return float64(f.TimeoutTerminated) }, true},
		}},
		{Name: "pool", Caption: "Pool pressure per release: service pool acquires that waited, most PgBouncer clients queued", YLabel: "acquires / clients", Series: []Series{
			{"pool acquires that waited", func(f history.Figures) float64 { return f.AppPoolAcquireWaits }, true},
			{"PgBouncer clients queued (max)", func(f history.Figures) float64 { return float64(f.PgBouncerMaxClWaiting) }, true},
		}},
		{Name: "rate", Caption: "Request rate per release", YLabel: "requests / s", Series: []Series{
			{"request rate", func(f history.Figures) float64 { return f.RequestRate }, false},
		}},
		{Name: "errors", Caption: "Error rate per release", YLabel: "%", Series: []Series{
			{"error rate", func(f history.Figures) float64 { return 100 * f.ErrorRate }, false},
		}},
		{Name: "latency", Caption: "Request latency per release (all methods)", YLabel: "ms", Series: []Series{
			{"p95", func(f history.Figures) float64 { return f.LatencyP95Ms }, false},
			{"p99", func(f history.Figures) float64 { return f.LatencyP99Ms }, false},
		}},
	}
}

// palette: colour-blind-safe (Okabe–Ito).
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, {0xD5, 0x5E, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
}

var (
	failColor     = color.RGBA{0xC0, 0x00, 0x00, 0xff}
	baselineColor = color.RGBA{0x44, 0x44, 0x44, 0xff}
)

// WritePlot draws the plot name as PNG or SVG: one point per entry, left
// to right in the order they were recorded, labelled by release; a failed
// entry is a red cross; the baseline is a dashed vertical line.
func (t *Trend) WritePlot(w io.Writer, name, format string) error {
	var spec *Plot
	for _, p := range Plots() {
		if p.Name == name {
			spec = &p
			break
		}
	}
	if spec == nil {
		return fmt.Errorf("trend: unknown plot %q", name)
	}
	p := plot.New()
	p.Title.Text = spec.Caption
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.Text = spec.YLabel
	p.X.Label.Text = "release (oldest left)"
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	var failedMark *plotter.Scatter

	ymax := 0.0
	for si, s := range spec.Series {
		var pts plotter.XYs
		var failed plotter.XYs
		for i, e := range t.Entries {
			if (s.Probe && !e.Figures.ProbeRecorded) || (!s.Probe && !e.Figures.LoadRecorded) {
				continue
			}
			v := s.Value(e.Figures)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: float64(i), Y: v})
			if !e.Pass {
				failed = append(failed, plotter.XY{X: float64(i), Y: v})
			}
			ymax = max(ymax, v)
		}
		if len(pts) == 0 {
			continue
		}
		c := palette[si%len(palette)]
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("trend: plot %s: %w", name, err)
		}
		line.Color, line.Width = c, vg.Points(1.5)
		scatter.Color, scatter.Shape, scatter.Radius = c, draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(line, scatter)
		p.Legend.Add(s.Label, line, scatter)
		if len(failed) > 0 {
			fs, err := plotter.NewScatter(failed)
			if err != nil {
				return fmt.Errorf("trend: plot %s: %w", name, err)
			}
			fs.Color, fs.Shape, fs.Radius = failColor, draw.CrossGlyph{}, vg.Points(5)
			p.Add(fs)
			failedMark = fs
		}
	}
	if failedMark != nil {
		p.Legend.Add("failed (not accepted)", failedMark)
	}
	if ymax <= 0 {
		ymax = 1
	}
	// Headroom above the data for the legend.
	p.Y.Min, p.Y.Max = 0, ymax*(1.15+0.1*float64(len(spec.Series)))
	if t.Baseline >= 0 {
		bl, err := plotter.NewLine(plotter.XYs{{X: float64(t.Baseline), Y: 0}, {X: float64(t.Baseline), Y: p.Y.Max}})
		if err != nil {
			return fmt.Errorf("trend: plot %s: %w", name, err)
		}
		bl.Color, bl.Width, bl.Dashes = baselineColor, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(bl)
		p.Legend.Add("baseline: "+label(t.Entries[t.Baseline]), bl)
	}
	p.X.Min, p.X.Max = -0.5, float64(len(t.Entries))-0.5
	p.X.Tick.Marker = releaseTicks(t.Entries)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter

	width := vg.Length(max(7, min(14, 2+0.45*float64(len(t.Entries))))) * vg.Inch
	c, err := newCanvas(format, width, 3.6*vg.Inch)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(dc)
	if format == FormatSVG {
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("trend: plot %s: %w", name, err)
		}
		_, err := w.Write(svgFontFamily.ReplaceAll(buf.Bytes(), []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`)))
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// releaseTicks labels the X axis with releases, thinned out so that at
// most about 20 labels show.
func releaseTicks(entries []*history.Entry) plot.Ticker {
	step := max(1, (len(entries)+19)/20)
	var ticks []plot.Tick
	for i, e := range entries {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 || i == len(entries)-1 {
			t.Label = label(e)
		}
		ticks = append(ticks, t)
	}
	return plot.ConstantTicks(ticks)
}

func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case FormatPNG:
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))}, nil
	case FormatSVG:
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("trend: unknown plot format %q (want png or svg)", format)
}

// svgFontFamily: let a browser without the Liberation fonts use a metric
// compatible one, as the run reports do, without embedding a font.
var svgFontFamily = regexp.MustCompile(`font-family:Liberation Sans;`)

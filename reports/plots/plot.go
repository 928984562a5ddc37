package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Plot names: each is the file stem of a plot in a report's plots/ folder.
const (
	Stuck     = "stuck"
	States    = "states"
	PgBouncer = "pgbouncer"
	AppPool   = "app_pool"
	Services  = "services"
	Release   = "release"
	Load      = "load"
)

// Plot formats.
const (
	PNG = "png"
	SVG = "svg"
)

// figure is one plot file: a column of panels sharing the time axis, one
// column per run.
type figure struct {
	name    string
	caption string
	has     func(*Run) bool
	panels  []func(*Run) *panel
	// rowHeight of each panel row.
	rowHeight vg.Length
}

// panel is one plot of a figure with what the layout needs to know.
type panel struct {
	*plot.Plot
	legend int // legend entries: leave headroom above the data for them
	logY   bool
}

// Names returns the plots that at least one of runs has data for, in the
// order reports show them.
func Names(runs ...*Run) []string {
	var names []string
	for _, f := range figures() {
		if slices.ContainsFunc(runs, f.has) {
			names = append(names, f.name)
		}
	}
	return names
}

// Caption is the one-line explanation shown under a plot.
func Caption(name string) string {
	if f, ok := figureByName(name); ok {
		return f.caption
	}
	return ""
}

func figureByName(name string) (figure, bool) {
	for _, f := range figures() {
		if f.name == name {
			return f, true
		}
	}
	return figure{}, false
}

// ErrNoData means the runs have no data for the plot asked for.
var ErrNoData = fmt.Errorf("no data for this plot")

// Write renders the named plot to w as PNG or SVG. With several runs
// (before, after) they sit side by side and share their axes, so that the
// same height means the same number.
func Write(w io.Writer, name, format string, runs ...*Run) error {
	f, ok := figureByName(name)
	if !ok {
		return fmt.Errorf("unknown plot %q", name)
	}
	if len(runs) == 0 || !slices.ContainsFunc(runs, f.has) {
		return fmt.Errorf("plot %s: %w", name, ErrNoData)
	}
	grid := make([][]*panel, len(f.panels))
	for i, mk := range f.panels {
		for _, r := range runs {
			p := mk(r)
			if i == 0 {
				p.Title.Text += " — " + r.Label
			}
			grid[i] = append(grid[i], p)
		}
	}
	shareAxes(grid, f.rowHeight)

	width := vg.Length(len(runs)) * 6.5 * vg.Inch
	height := vg.Length(len(grid)) * f.rowHeight
	c, err := newCanvas(format, width, height)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	plots := make([][]*plot.Plot, len(grid))
	for i, row := range grid {
		for _, p := range row {
			plots[i] = append(plots[i], p.Plot)
		}
	}
	tiles := draw.Tiles{Rows: len(grid), Cols: len(runs), PadX: vg.Inch / 3, PadY: vg.Inch / 6,
		PadTop: vg.Inch / 12, PadBottom: vg.Inch / 12, PadLeft: vg.Inch / 12, PadRight: vg.Inch / 6}
	canvases := plot.Align(plots, tiles, dc)
	for i, row := range plots {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	if format == SVG {
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		_, err = w.Write(svgFonts(buf.Bytes()))
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// dpi of PNG plots: sharp on high-density screens and in print.
const dpi = 150

func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case PNG:
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}, nil
	case SVG:
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("unknown plot format %q (want png or svg)", format)
}

// svgFontFamily matches the font-family vgsvg writes for Liberation Sans.
var svgFontFamily = regexp.MustCompile(`font-family:Liberation Sans;`)

// svgFonts lets a browser without the Liberation fonts use a metric
// compatible one (Arial, Helvetica) instead of a serif default, so text
// keeps the width the layout was computed with — without embedding a font.
func svgFonts(svg []byte) []byte {
	return svgFontFamily.ReplaceAll(svg, []byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
}

// shareAxes gives every panel the same time (X) axis and every row the
// same Y axis across runs, then raises the top of the Y axis so that the
// legend (top left) sits above the data.
func shareAxes(grid [][]*panel, rowHeight vg.Length) {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, row := range grid {
		for _, p := range row {
			if p.X.Min <= p.X.Max {
				xmin, xmax = min(xmin, p.X.Min), max(xmax, p.X.Max)
			}
		}
	}
	for _, row := range grid {
		ymin, ymax := math.Inf(1), math.Inf(-1)
		legend := 0
		for _, p := range row {
			if p.Y.Min <= p.Y.Max {
				ymin, ymax = min(ymin, p.Y.Min), max(ymax, p.Y.Max)
			}
			legend = max(legend, p.legend)
		}
		if ymin > ymax {
			ymin, ymax = 0, 1
		}
		if ymax <= ymin {
			ymax = ymin + 1
		}
		// The share of the data area the legend takes: its lines over the
		// panel less its title and X axis (about 75 pt).
		f := 0.0
		if legend > 0 {
			f = min(0.6, float64(vg.Points(13*float64(legend)+8)/(rowHeight-vg.Points(75))))
		}
		for _, p := range row {
			if xmin <= xmax {
				p.X.Min, p.X.Max = xmin, xmax
			}
			p.Y.Min, p.Y.Max = ymin, ymax
			switch {
			case f == 0:
			case p.logY:
				lo := math.Log10(ymin)
				p.Y.Max = math.Pow(10, lo+(math.Log10(ymax)-lo)/(1-f))
			default:
				p.Y.Max = ymin + (ymax-ymin)/(1-f)
			}
		}
	}
}

// The palette: Okabe & Ito's colours, distinguishable with the common
// colour-vision deficiencies; lines also differ by dash so that a
// grey-scale print tells them apart. Everything is drawn on white, which
// reads the same on a light or a dark page.
var (
	colBlack     = color.RGBA{0, 0, 0, 255}
	colOrange    = color.RGBA{230, 159, 0, 255}
	colSky       = color.RGBA{86, 180, 233, 255}
	colGreen     = color.RGBA{0, 158, 115, 255}
	colBlue      = color.RGBA{0, 114, 178, 255}
	colVermilion = color.RGBA{213, 94, 0, 255}
	colPurple    = color.RGBA{204, 121, 167, 255}
	colGrey      = color.RGBA{120, 120, 120, 255}
	colGrid      = color.RGBA{225, 225, 225, 255}
	colBand      = color.RGBA{240, 240, 240, 255}
)

var (
	dashSolid  []vg.Length
	dashDashed = []vg.Length{vg.Points(6), vg.Points(3)}
	dashDotted = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	dashLong   = []vg.Length{vg.Points(10), vg.Points(3), vg.Points(2), vg.Points(3)}
)

func lineStyle(c color.Color, width float64, dashes []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(width), Dashes: dashes}
}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(sans, size), Handler: plot.DefaultTextHandler}
}

// niceTicks labels a linear axis at 1, 2 or 5 times a power of ten, about
// five labels, with no more decimals than the step needs.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	span := hi - lo
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if span/(m*mag) <= 7 {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	minor := step / 5
	if math.Round(step/mag) == 2 {
		minor = step / 4
	}
	for v := math.Ceil(lo/minor) * minor; v <= hi+minor*1e-9; v += minor {
		major := math.Abs(math.Remainder(v, step)) < minor*1e-6
		t := plot.Tick{Value: v}
		if major {
			t.Value = math.Round(v/step) * step
			t.Label = strconv.FormatFloat(t.Value, 'f', prec, 64)
			if t.Label == "-0" {
				t.Label = "0"
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// newPanel returns a plot in the report's style: sans-serif type large
// enough to read when the image is scaled to a page, light grid, legend
// top left.
func newPanel(title, xlabel, ylabel string) *panel {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
		a.LineStyle = lineStyle(colBlack, 0.75, nil)
		a.Tick.LineStyle = lineStyle(colBlack, 0.75, nil)
		a.Tick.Marker = niceTicks{}
	}
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.Legend.TextStyle.Font = font.From(sans, 10)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(22)
	p.Legend.Padding = vg.Points(1.5)
	p.Add(grid{})
	return &panel{Plot: p}
}

// addLegend adds a legend entry and marks the panel as having a legend.
func (p *panel) addLegend(name string, thumbs ...plot.Thumbnailer) {
	p.Legend.Add(name, thumbs...)
	p.legend++
}

// grid draws light horizontal and vertical rules at the major ticks.
type grid struct{}

func (grid) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := lineStyle(colGrid, 0.5, nil)
	for _, t := range plt.X.Tick.Marker.Ticks(plt.X.Min, plt.X.Max) {
		if !t.IsMinor() && t.Value >= plt.X.Min && t.Value <= plt.X.Max {
			x := trX(t.Value)
			c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		}
	}
	for _, t := range plt.Y.Tick.Marker.Ticks(plt.Y.Min, plt.Y.Max) {
		if !t.IsMinor() && t.Value >= plt.Y.Min && t.Value <= plt.Y.Max {
			y := trY(t.Value)
			c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
		}
	}
}

// band shades an X interval over the whole height (when the load ran).
type band struct {
	from, to float64
	fill     color.Color
}

func (b band) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	x0, x1 := max(trX(b.from), c.Min.X), min(trX(b.to), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.fill, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

func (b band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.fill, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// vline marks one X value over the whole height (a timeout, a threshold).
type vline struct {
	x     float64
	style draw.LineStyle
}

func (v vline) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	if x := trX(v.x); x >= c.Min.X && x <= c.Max.X {
		c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
	}
}

func (v vline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(v.style, c.Min.X, y, c.Max.X, y)
}

func (v vline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.x, v.x, math.Inf(1), math.Inf(-1)
}

// note writes a message in the middle of an empty panel.
type note string

func (n note) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(12, colGrey)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), string(n))
}

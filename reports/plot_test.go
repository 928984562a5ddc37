package reports

import (
	"bytes"
	"errors"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var plotsOut = flag.String("plots", "", "also write the test plots into this directory, to look at them")

// TestPlots renders every plot of single runs and of before/after pairs, as
// PNG and SVG, and checks that each image has real content: many colours
// in the PNG, the series' paths and legend in the SVG.
func TestPlots(t *testing.T) {
	before, after := loadFixture(t, "before"), loadFixture(t, "after")
	sb, sa := syntheticRun(1, true), syntheticRun(2, false)
	if got, want := PlotNames(sb), []string{PlotStuck, PlotStates, PlotRelease, PlotPgBouncer, PlotAppPool, PlotLoad}; !slices.Equal(got, want) {
		t.Fatalf("PlotNames(synthetic) = %v, want every plot %v", got, want)
	}
	cases := []struct {
		name string
		runs []*Run
	}{
		{"fixture-before", []*Run{before}},
		{"fixture-compare", []*Run{before, after}},
		{"synthetic-before", []*Run{sb}},
		{"synthetic-compare", []*Run{sb, sa}},
		// A comparison where one side lacks a series still renders.
		{"mixed-compare", []*Run{before, sa}},
	}
	// Words each plot's SVG must contain: its title and a legend entry.
	want := map[string][]string{
		PlotStuck:     {"Stuck idle-in-transaction sessions", "idle in transaction (all)"},
		PlotStates:    {"Sessions by state", "idle in transaction", "active"},
		PlotRelease:   {"Connection release latency", "idle_in_transaction_session_timeout", "released"},
		PlotPgBouncer: {"PgBouncer clients", "waiting for a server connection", "maxwait"},
		PlotAppPool:   {"Service connection pool", "acquired"},
		PlotLoad:      {"Requests", "Error rate", "Latency percentiles", "p99", "Active virtual users"},
	}
	for _, c := range cases {
		for _, name := range PlotNames(c.runs...) {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				var pngBuf, svgBuf bytes.Buffer
				if err := WritePlot(&pngBuf, name, FormatPNG, c.runs...); err != nil {
					t.Fatal(err)
				}
				if err := WritePlot(&svgBuf, name, FormatSVG, c.runs...); err != nil {
					t.Fatal(err)
				}
				img, err := png.Decode(bytes.NewReader(pngBuf.Bytes()))
				if err != nil {
					t.Fatalf("PNG does not decode: %v", err)
				}
				b := img.Bounds()
				if minW := 900 * len(c.runs); b.Dx() < minW || b.Dy() < 400 {
					t.Errorf("PNG is %dx%d, want at least %dx400", b.Dx(), b.Dy(), minW)
				}
				if n := distinctColours(img); n < 40 {
					t.Errorf("PNG has %d distinct colours; a plot with lines, fills and text has many more", n)
				}
				svg := svgBuf.String()
				if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "viewBox=") {
					t.Errorf("not an SVG with a viewBox: %.80q", svg)
				}
				if n := strings.Count(svg, "<path"); n < 20 {
					t.Errorf("SVG has %d paths; want the axes, grid and series", n)
				}
				for _, w := range want[name] {
					if !strings.Contains(svg, w) {
						t.Errorf("SVG lacks %q", w)
					}
				}
				if strings.Contains(svg, "NaN") {
					t.Error("SVG contains NaN coordinates")
				}
				for _, r := range c.runs {
					if !strings.Contains(svg, r.Label()) {
						t.Errorf("SVG does not name run %q", r.Label())
					}
				}
				if *plotsOut != "" {
					for ext, buf := range map[string]*bytes.Buffer{"png": &pngBuf, "svg": &svgBuf} {
						p := filepath.Join(*plotsOut, c.name+"-"+name+"."+ext)
						if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
		}
	}
}

func TestWritePlotErrors(t *testing.T) {
	r := syntheticRun(3, false)
	noLoad := loadFixture(t, "after")
	tests := []struct {
		name, plot, format string
		runs               []*Run
		want               error
	}{
		{"unknown plot", "nope", FormatPNG, []*Run{r}, nil},
		{"unknown format", PlotStuck, "gif", []*Run{r}, nil},
		{"no runs", PlotStuck, FormatPNG, nil, ErrNoPlot},
		{"no data", PlotLoad, FormatSVG, []*Run{noLoad}, ErrNoPlot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WritePlot(&bytes.Buffer{}, tt.plot, tt.format, tt.runs...)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}

func distinctColours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
		}
	}
	return len(seen)
}

func BenchmarkWritePlotPNG(b *testing.B) {
	runs := []*Run{syntheticRun(1, true), syntheticRun(2, false)}
	for b.Loop() {
		if err := WritePlot(&bytes.Buffer{}, PlotStuck, FormatPNG, runs...); err != nil {
			b.Fatal(err)
		}
	}
}

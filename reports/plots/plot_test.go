package plots_test

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

	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/plots"
)

var plotsOut = flag.String("plots", "", "also write the test plots into this directory, to look at them")

// loadFixture reads a run of the recorded sign-off in the reports'
// testdata as LoadRun does.
func loadFixture(t testing.TB, name string) *plots.Run {
	t.Helper()
	r, err := reports.LoadRun(filepath.Join("..", "testdata", "signoff", name))
	if err != nil {
		t.Fatal(err)
	}
	return r.PlotRun()
}

// TestPlots renders every plot of single runs and of before/after pairs, as
// PNG and SVG, and checks that each image has real content: many colours
// in the PNG, the series' paths and legend in the SVG.
func TestPlots(t *testing.T) {
	before, after := loadFixture(t, "before"), loadFixture(t, "after")
	sb, sa := synthetic.Run(1, true), synthetic.Run(2, false)
	if got, want := plots.Names(sb), []string{plots.Stuck, plots.States, plots.Release, plots.PgBouncer, plots.AppPool, plots.Load}; !slices.Equal(got, want) {
		t.Fatalf("plots.Names(synthetic) = %v, want every plot %v", got, want)
	}
	cases := []struct {
		name string
		runs []*plots.Run
	}{
		{"fixture-before", []*plots.Run{before}},
		{"fixture-compare", []*plots.Run{before, after}},
		{"synthetic-before", []*plots.Run{sb}},
		{"synthetic-compare", []*plots.Run{sb, sa}},
		// A comparison where one side lacks a series still renders.
		{"mixed-compare", []*plots.Run{before, sa}},
	}
	// Words each plot's SVG must contain: its title and a legend entry.
	want := map[string][]string{
		plots.Stuck:     {"Stuck idle-in-transaction sessions", "idle in transaction (all)"},
		plots.States:    {"Sessions by state", "idle in transaction", "active"},
		plots.Release:   {"Connection release latency", "idle_in_transaction_session_timeout", "released"},
		plots.PgBouncer: {"PgBouncer clients", "waiting for a server connection", "maxwait"},
		plots.AppPool:   {"Service connection pool", "acquired"},
		plots.Load:      {"Requests", "Error rate", "Latency percentiles", "p99", "Active virtual users"},
	}
	for _, c := range cases {
		for _, name := range plots.Names(c.runs...) {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				var pngBuf, svgBuf bytes.Buffer
				if err := plots.Write(&pngBuf, name, plots.PNG, c.runs...); err != nil {
					t.Fatal(err)
				}
				if err := plots.Write(&svgBuf, name, plots.SVG, c.runs...); err != nil {
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
					if !strings.Contains(svg, r.Label) {
						t.Errorf("SVG does not name run %q", r.Label)
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

func TestWriteErrors(t *testing.T) {
	r := synthetic.Run(3, false)
	noLoad := loadFixture(t, "after")
	tests := []struct {
		name, plot, format string
		runs               []*plots.Run
		want               error
	}{
		{"unknown plot", "nope", plots.PNG, []*plots.Run{r}, nil},
		{"unknown format", plots.Stuck, "gif", []*plots.Run{r}, nil},
		{"no runs", plots.Stuck, plots.PNG, nil, plots.ErrNoData},
		{"no data", plots.Load, plots.SVG, []*plots.Run{noLoad}, plots.ErrNoData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := plots.Write(&bytes.Buffer{}, tt.plot, tt.format, tt.runs...)
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
	runs := []*plots.Run{synthetic.Run(1, true), synthetic.Run(2, false)}
	for b.Loop() {
		if err := plots.Write(&bytes.Buffer{}, plots.Stuck, plots.PNG, runs...); err != nil {
			b.Fatal(err)
		}
	}
}

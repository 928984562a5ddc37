// Package trend draws a history directory (package history) release after
// release: one self-contained HTML page (trend.html, plots inline as SVG,
// nothing loaded from anywhere), a Markdown table (trend.md) and one PNG
// and one SVG per plot (plots/NAME.png|svg), with the baseline marked.
//
//	entries, _, _ := store.List()
//	t, err := trend.New(entries, trend.Options{})
//	err = t.Write("out/trend")
//
// A trend follows one profile and one (after) variant — by default the
// newest entry's — since figures of different loads do not line up.
package trend

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Options select what a trend shows.
type Options struct {
	// Profile and Variant select the entries; empty: the newest entry's.
	Profile, Variant string
	// Baseline marks an entry: "last" (the default: the newest passing
	// entry, the one the next sign-off with --baseline last compares
	// with), an entry ID, or "none".
	Baseline string
	// Title heads the page; empty: "leakbench trend: PROFILE / VARIANT".
	Title string
}

// Trend is the entries of one profile and variant, oldest first.
type Trend struct {
	Profile, Variant string
	// Service names the user's own service (the newest entry's target)
	// when the entries are of one — run --target, signoff
	// --before-target/--after-target — which have no variant; else "".
	Service string
	Title   string
	Entries []*history.Entry
	// Baseline is the index of the baseline entry in Entries, -1 for none.
	Baseline int
	// Left names what the selection left out, for the page to say so.
	Left []string
}

// ErrEmpty means the history holds no entry to draw.
var ErrEmpty = errors.New("no entry to draw")

// New selects the entries of a trend.
func New(entries []*history.Entry, o Options) (*Trend, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("trend: %w: the history is empty", ErrEmpty)
	}
	newest := entries[len(entries)-1]
	t := &Trend{Profile: o.Profile, Variant: o.Variant, Baseline: -1}
	if t.Profile == "" {
		t.Profile = newest.Profile
	}
	if t.Variant == "" {
		t.Variant = newest.Environment.Variant
	}
	others := map[string]int{}
	for _, e := range entries {
		if e.Profile == t.Profile && e.Environment.Variant == t.Variant {
			t.Entries = append(t.Entries, e)
		} else {
			others[fmt.Sprintf("profile %q, variant %q", e.Profile, e.Environment.Variant)]++
		}
	}
	for k, n := range others {
		t.Left = append(t.Left, fmt.Sprintf("%d entries of %s", n, k))
	}
	slices.Sort(t.Left)
	if len(t.Entries) == 0 {
		return nil, fmt.Errorf("trend: %w of profile %q and variant %q (the history has %s)", ErrEmpty, t.Profile, t.Variant, strings.Join(t.Left, "; "))
	}
	if t.Variant == "" {
		t.Service = t.Entries[len(t.Entries)-1].Environment.Target
		if t.Service == "" {
			t.Service = "unnamed"
		}
	}
	t.Title = o.Title
	if t.Title == "" {
		t.Title = fmt.Sprintf("leakbench trend: %s / %s", t.Profile, t.Variant)
		if t.Service != "" {
			t.Title = fmt.Sprintf("leakbench trend: %s / your service (%s)", t.Profile, t.Service)
		}
	}
	switch ref := o.Baseline; ref {
	case "none":
	case "", history.BaselineLast:
		if b, _ := history.SelectBaseline(t.Entries, history.BaselineLast, t.Profile, t.Variant); b != nil {
			t.Baseline = t.index(b.ID)
		}
	default:
		b, err := history.Find(t.Entries, ref)
		if err != nil {
			return nil, fmt.Errorf("trend: baseline: %w (among the %d entries of profile %q, variant %q)", err, len(t.Entries), t.Profile, t.Variant)
		}
		t.Baseline = t.index(b.ID)
	}
	return t, nil
}

func (t *Trend) index(id string) int {
	for i, e := range t.Entries {
		if e.ID == id {
			return i
		}
	}
	return -1
}

// Files a trend writes into its directory (their names are rundir's, the
// owner of every output directory's names); plots go to rundir.PlotsDir.
const (
	HTMLFile     = rundir.TrendHTMLFile
	MarkdownFile = rundir.TrendMarkdownFile
)

// Write writes trend.html, trend.md and plots/NAME.png|svg into dir.
func (t *Trend) Write(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, rundir.PlotsDir), 0o755); err != nil {
		return fmt.Errorf("trend: %w", err)
	}
	svgs := map[string][]byte{}
	for _, p := range Plots() {
		for _, format := range []string{FormatPNG, FormatSVG} {
			var b bytes.Buffer
			if err := t.WritePlot(&b, p.Name, format); err != nil {
				return err
			}
			if format == FormatSVG {
				svgs[p.Name] = b.Bytes()
			}
			if err := rundir.WriteFile(filepath.Join(dir, rundir.PlotsDir, p.Name+"."+format), b.Bytes()); err != nil {
				return err
			}
		}
	}
	var md bytes.Buffer
	if err := t.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := rundir.WriteFile(filepath.Join(dir, MarkdownFile), md.Bytes()); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := t.writeHTML(&page, svgs); err != nil {
		return err
	}
	return rundir.WriteFile(filepath.Join(dir, HTMLFile), page.Bytes())
}

// label is an entry's release as the axes show it: short.
func label(e *history.Entry) string {
	s := e.Release
	if s == "" || s == "unknown" {
		s = e.Recorded.UTC().Format("01-02 15:04")
	}
	if r := []rune(s); len(r) > 16 {
		s = string(r[:15]) + "…"
	}
	return s
}

func recorded(e *history.Entry) string { return e.Recorded.UTC().Format(time.DateTime) }

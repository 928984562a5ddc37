package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// SignoffDir is where leakbench signoff --capacity writes its capacity
// search, inside the sign-off's output directory.
const SignoffDir = "capacity"

// Signoff is compare.json's capacity: what leakbench signoff
// --capacity measured of both variants, as its capacity search's
// summary.json (in Dir) has it. See SCHEMA.md, "compare.json".
type Signoff struct {
	// Dir is the search's output directory, relative to the sign-off's.
	Dir string `json:"dir"`
	// Variants are the searches, before then after.
	Variants []SignoffVariant `json:"variants"`
	// ChangeLine is how the fix moved the capacity, exactly as printed
	// ("commit-in-finally → fixed raised capacity from 1 to 20 users,
	// 20.0×"); absent when the searches measured no change (a search
	// found no capacity, or stopped inconclusive).
	ChangeLine string `json:"change_line,omitempty"`
	// HoldLine is what the fix changed of the pool's sizing
	// (SizingChange.Line): what the measured hold did and the
	// pool's ceiling with it, or which side's figure was not measured.
	// Absent with fewer than two searches.
	HoldLine string `json:"hold_line,omitempty"`
}

// SignoffVariant is one variant's capacity search in a sign-off.
type SignoffVariant struct {
	Name string `json:"name"`
	// Outcome is the search's (Found, AboveMax,
	// BelowStart, Inconclusive).
	Outcome string `json:"outcome"`
	// Capacity is the largest load a stage held every limit at, in Unit
	// (0: none did); AtLeast when it is only a lower bound (the search
	// held up to its max, or stopped inconclusive).
	Capacity int    `json:"capacity"`
	AtLeast  bool   `json:"at_least,omitempty"`
	Unit     string `json:"unit"`
	// FirstBad is the smallest load that broke a limit; Limit the one that
	// tripped first there, LimitAtSeconds when in that stage (absent: not
	// recorded), Resource the resource behind it.
	FirstBad       int      `json:"first_bad,omitempty"`
	Limit          string   `json:"limit,omitempty"`
	LimitAtSeconds *float64 `json:"limit_at_s,omitempty"`
	// LimitTiedWith: the limits that tripped at the same recorded time.
	LimitTiedWith []string `json:"limit_tied_with,omitempty"`
	Resource      string   `json:"resource,omitempty"`
	// Reason says why an inconclusive search stopped.
	Reason string `json:"reason,omitempty"`
	// Headline is the search's line, exactly as printed.
	Headline string `json:"headline"`
	// SizingLine is the search's sizing in brief
	// (Search.SizingBrief): its hold, pool and ceiling, each
	// figure it lacks named as not measured.
	SizingLine string `json:"sizing_line"`
}

// NewSignoff is the sign-off's view of the capacity search c,
// written in dir (relative to the sign-off's directory).
func NewSignoff(c *Summary, dir string) *Signoff {
	sc := &Signoff{Dir: dir, Variants: []SignoffVariant{}}
	if ch := c.Capacity.Change; ch != nil {
		sc.ChangeLine = ch.Line
	}
	if sz := CompareSizing(c.Capacity.Searches); sz != nil {
		sc.HoldLine = sz.Line
	}
	for i := range c.Capacity.Searches {
		s := &c.Capacity.Searches[i]
		sc.Variants = append(sc.Variants, SignoffVariant{Name: s.Name, Outcome: s.Outcome, Capacity: s.Capacity,
			AtLeast: s.Outcome == AboveMax || s.Outcome == Inconclusive, Unit: s.Unit, FirstBad: s.FirstBad,
			Limit: s.Limit, LimitAtSeconds: s.LimitAtSeconds, LimitTiedWith: s.LimitTiedWith, Resource: s.Resource, Reason: s.Reason, Headline: s.Headline(), SizingLine: s.SizingBrief()})
	}
	return sc
}

// capacityText is the section's text: the change line (or that none was
// measured), then each variant's headline.
func (sc *Signoff) capacityText() (change string, lines []string) {
	change = sc.ChangeLine
	if change == "" {
		change = "No change measured: it takes both searches to find a capacity (see each line)."
	}
	if sc.HoldLine != "" {
		lines = append(lines, format.UpperFirst(sc.HoldLine))
	}
	for _, v := range sc.Variants {
		lines = append(lines, v.Headline)
	}
	for _, v := range sc.Variants {
		lines = append(lines, "Sizing of "+v.SizingLine)
	}
	return change, lines
}

// WriteMarkdown writes the sign-off report's Capacity section.
func (sc *Signoff) WriteMarkdown(b *strings.Builder) {
	change, lines := sc.capacityText()
	fmt.Fprintf(b, "\n## Capacity\n\n**%s**\n\n", change)
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", l)
	}
	fmt.Fprintf(b, "\nEach stage, the curve and the search's JUnit: `%s`.\n", filepath.ToSlash(filepath.Join(sc.Dir, rundir.ReportFile)))
}

var capacitySectionHTML = template.Must(template.New("capacity").Parse(`<h2>Capacity</h2>
<p><strong>{{.Change}}</strong></p>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
<p>Each stage, the curve and the search's JUnit: <a href="{{.Report}}">{{.Report}}</a>.</p>
`))

// HTML is the sign-off page's Capacity section; "" for none.
func (sc *Signoff) HTML() (template.HTML, error) {
	if sc == nil {
		return "", nil
	}
	change, lines := sc.capacityText()
	var b strings.Builder
	err := capacitySectionHTML.Execute(&b, struct {
		Change, Report string
		Lines          []string
	}{change, filepath.ToSlash(filepath.Join(sc.Dir, rundir.HTMLFile)), lines})
	if err != nil {
		return "", fmt.Errorf("capacity section: %w", err)
	}
	return template.HTML(b.String()), nil // #nosec: the template escaped every text
}

// ReadSignoff reads the capacity search a sign-off in dir holds
// (leakbench signoff --capacity), so that rendering the sign-off again
// keeps its section; nil when there is none.
func ReadSignoff(dir string) (*Signoff, error) {
	raw, err := os.ReadFile(filepath.Join(dir, SignoffDir, rundir.SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the sign-off's capacity search: %w", err)
	}
	var cs Summary
	if err := json.Unmarshal(raw, &cs); err != nil || cs.Kind != Kind {
		return nil, fmt.Errorf("%s is not a capacity search's summary (%w)", filepath.Join(dir, SignoffDir, rundir.SummaryFile), err)
	}
	return NewSignoff(&cs, SignoffDir), nil
}

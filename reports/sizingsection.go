package reports

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/sizing"
)

// SizeRun sizes the run in dir — the pool its measured hold asks for at
// a target rate, and whether PostgreSQL and PgBouncer have the
// connections for it across replicas — records it in summary.json
// (sizing) and renders the run's report again with its Sizing section.
// Bad options (a target rate ≤ 0 or zero replicas given) and a run
// without a probe are sizing.ErrInput; a directory holding no run is
// ErrNotRun.
func SizeRun(dir string, o sizing.Options) (*rundir.Sizing, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r, err := LoadRun(dir)
	if err != nil {
		return nil, err
	}
	sz, err := sizing.Size(r.Summary, r.Load, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	r.Summary.Sizing = sz
	return sz, renderRun(r, false)
}

// resize sizes a probed run as it was sized before (the options it
// recorded), or with none given: every probed run's report has a Sizing
// section. A run without a probe has none.
func resize(r *Run) {
	s := r.Summary
	if s.Probe == nil {
		s.Sizing = nil
		return
	}
	var o sizing.Options
	if s.Sizing != nil {
		o = sizing.FromRecorded(s.Sizing.Options)
	}
	if sz, err := sizing.Size(s, r.Load, o); err == nil {
		s.Sizing = sz
	}
}

// writeSizing writes the Sizing section in Markdown.
func writeSizing(b *strings.Builder, s *rundir.Summary) {
	sz := s.Sizing
	if sz == nil {
		return
	}
	b.WriteString("\n## Sizing\n\n")
	for _, line := range sizing.Lines(sz) {
		fmt.Fprintf(b, "- %s\n", line)
	}
	b.WriteString("\n| input | value | source |\n|---|---|---|\n")
	for _, in := range sz.Inputs {
		fmt.Fprintf(b, "| %s | %s | %s |\n", in.Name, sizing.InputValue(in), mdEscape(in.Source))
	}
	if len(sz.Missing) > 0 {
		b.WriteString("\nNot measured or not given, so not used: " + mdEscape(strings.Join(sz.Missing, "; ")) + ".\n")
	}
}

// sizingHTML is the Sizing section of report.html.
func sizingHTML(s *rundir.Summary) template.HTML { return sizing.SectionHTML(s.Sizing, "Sizing") }

package reports

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/soak"
)

// writeSoak writes a soak run's section (package soak) into its Markdown
// report; nothing for other runs.
func writeSoak(b *strings.Builder, s *rundir.Summary) {
	if s.Soak == nil {
		return
	}
	b.WriteString("\n")
	_ = soak.WriteMarkdown(b, s.Soak) // a strings.Builder does not fail
	fmt.Fprintf(b, "\n![soak: each resource and its fit](plots/%s.png)\n", soak.PlotName)
}

// soakHTML is a soak run's section of the HTML report; empty for others.
func soakHTML(s *rundir.Summary) template.HTML {
	if s.Soak == nil {
		return ""
	}
	var b strings.Builder
	_ = soak.WriteHTML(&b, s.Soak, "plots/"+soak.PlotName+".png") // a strings.Builder does not fail
	return template.HTML(b.String())
}

// renderSoak re-judges a soak run from its files (streamed: a long soak
// costs one point a second per resource) and redraws its plot, thinned as
// the run's plots are, when leakbench report renders it.
func renderSoak(r *Run) error {
	s := r.Summary
	if s.Soak == nil || s.Incomplete {
		return nil
	}
	stuck := 1.0
	if s.Probe != nil && s.Probe.StuckAfterSeconds > 0 {
		stuck = s.Probe.StuckAfterSeconds
	}
	res, err := soak.Render(r.Dir, s.Soak, stuck)
	if err != nil {
		return fmt.Errorf("soak report: %w", err)
	}
	s.Soak = res
	return nil
}

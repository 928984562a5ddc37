package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/plots"
)

// count writes n and its unit, "1 user" and "2 users".
func count(n int, unit string) string {
	if n == 1 && unit == "users" {
		return "1 user"
	}
	return fmt.Sprintf("%d %s", n, unit)
}

// Headline sums up one search in a line: "fixed: capacity 24 users
// (26 broke pool exhausted — the service pool, 10/10 acquired)".
func (s *CapacitySearch) Headline() string {
	switch s.Outcome {
	case CapacityFound:
		line := fmt.Sprintf("%s: capacity %s — at %s, %s", s.Name, count(s.Capacity, s.Unit), count(s.FirstBad, s.Unit), s.trippedFirst())
		if s.Resource != "" {
			line += " (" + s.Resource + ")"
		}
		if !s.Resolved {
			line += "; not narrowed to the resolution " + s.Resolution + " within the stages allowed"
		}
		return line
	case CapacityAboveMax:
		return fmt.Sprintf("%s: every stage held, up to the search's max of %s: capacity is at least that", s.Name, count(s.Capacity, s.Unit))
	case CapacityBelowStart:
		return fmt.Sprintf("%s: even %s broke a limit (%s): capacity is below the smallest load tried", s.Name, count(s.FirstBad, s.Unit), s.trippedFirst())
	}
	line := fmt.Sprintf("%s: inconclusive — %s", s.Name, s.Reason)
	if s.Capacity > 0 {
		line += fmt.Sprintf("; held every limit up to %s (a lower bound, not the capacity)", count(s.Capacity, s.Unit))
	}
	return line
}

// trippedFirst names the limit that tripped first at FirstBad, with when:
// "pool exhausted tripped first at 9.0 s into the stage". A limit whose
// time the stage did not record is named without "first": it came first
// only in the order the limits are judged.
func (s *CapacitySearch) trippedFirst() string {
	if s.LimitAtSeconds == nil {
		return s.Limit + " tripped (time not recorded)"
	}
	when := CapacityTrip{AtSeconds: s.LimitAtSeconds}.When()
	if len(s.LimitTiedWith) > 0 {
		return fmt.Sprintf("%s and %s tripped together %s (which came first is not recorded)", s.Limit, strings.Join(s.LimitTiedWith, " and "), when)
	}
	return s.Limit + " tripped first " + when
}

// WriteCapacityMarkdown writes the search's report in Markdown: the
// headline, the comparison, and each search's stages.
func WriteCapacityMarkdown(w io.Writer, c *CapacitySummary) error {
	var b strings.Builder
	b.WriteString("# Capacity\n\n")
	if ch := c.Capacity.Change; ch != nil {
		fmt.Fprintf(&b, "**%s**\n\n", ch.Line)
	}
	for i := range c.Capacity.Searches {
		s := &c.Capacity.Searches[i]
		fmt.Fprintf(&b, "- %s\n", s.Headline())
		if s.Min > 0 && s.MinPass != nil {
			word := "met"
			if !*s.MinPass {
				word = "NOT met"
			}
			fmt.Fprintf(&b, "  - required: %d %s — %s\n", s.Min, s.Unit, word)
		}
	}
	for i := range c.Capacity.Searches {
		s := &c.Capacity.Searches[i]
		fmt.Fprintf(&b, "\n## %s\n\nLimits: %s.\n\n", s.Name, strings.Join(s.Limits, "; "))
		b.WriteString("| stage | load | verdict | req/s | errors | p50 / p95 / p99 | service conns | stuck | PgBouncer waiting | generator |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, st := range s.Stages {
			fmt.Fprintf(&b, "| %d | %s | %s | %.1f | %.1f%% | %s / %s / %s | %s | %s | %s | %s |\n",
				st.Index, count(st.Load, s.Unit), st.verdict(), st.ReqPerSecond, 100*st.ErrorRate,
				capMs(st.P50Ms), capMs(st.P95Ms), capMs(st.P99Ms), capProbed(st, st.ServiceConns), capProbed(st, st.MaxStuck), capProbed(st, st.PgBouncerWait), orDash(st.Generator))
		}
		b.WriteString("\nEach stage's run directory is kept: ")
		for j, st := range s.Stages {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "`%s`", st.Dir)
		}
		b.WriteString(".\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// verdict is the stage's verdict in a few words.
func (st *CapacityStage) verdict() string {
	switch {
	case st.Inconclusive != "":
		return "inconclusive: " + st.Inconclusive
	case st.Held:
		return "held"
	}
	var names []string
	for _, t := range st.Trips {
		sep := " "
		if t.AtSeconds == nil {
			sep = ", "
		}
		names = append(names, t.Limit+sep+t.When()+" ("+t.Detail+")")
	}
	return "broke " + strings.Join(names, "; ")
}

func capMs(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func capProbed(st CapacityStage, n int) string {
	if !st.Probed {
		return "—"
	}
	return fmt.Sprint(n)
}

// WriteCapacityJUnit writes one suite per search: a case per stage (a
// failure where it broke a limit; inconclusive stages skipped) and a
// case for the required --min.
func WriteCapacityJUnit(w io.Writer, c *CapacitySummary) error {
	var suites []junit.Suite
	for _, s := range c.Capacity.Searches {
		su := junit.Suite{Name: "capacity " + s.Name}
		for _, st := range s.Stages {
			cs := junit.Case{Name: fmt.Sprintf("stage %d: %d %s", st.Index, st.Load, s.Unit), Classname: "capacity." + s.Name}
			switch {
			case st.Inconclusive != "":
				cs.Skipped = &junit.Message{Message: st.Inconclusive}
			case !st.Held:
				cs.Failure = &junit.Message{Message: st.verdict(), Type: "limit"}
			}
			su.Add(cs)
		}
		if s.Min > 0 {
			cs := junit.Case{Name: fmt.Sprintf("sustains %d %s", s.Min, s.Unit), Classname: "capacity." + s.Name, SystemOut: s.Headline()}
			switch {
			case s.MinPass == nil:
				cs.Skipped = &junit.Message{Message: "inconclusive: " + s.Reason}
			case !*s.MinPass:
				cs.Failure = &junit.Message{Message: s.Headline(), Type: "capacity"}
			}
			su.Add(cs)
		}
		suites = append(suites, su)
	}
	return junit.Write(w, "leakbench capacity", suites...)
}

// CapacityCurves are the searches' curves for plots.WriteCapacity.
func CapacityCurves(c *CapacitySummary) []plots.CapacityCurve {
	var out []plots.CapacityCurve
	for _, s := range c.Capacity.Searches {
		cv := plots.CapacityCurve{Label: s.Name, Unit: s.Unit}
		if s.Outcome != CapacityBelowStart {
			cv.Knee = float64(s.Capacity)
		}
		for _, st := range s.Stages {
			cv.Points = append(cv.Points, plots.CapacityPoint{Load: float64(st.Load), P50Ms: st.P50Ms, P95Ms: st.P95Ms, P99Ms: st.P99Ms,
				ErrorRate: st.ErrorRate, ServiceConns: float64(st.ServiceConns), Stuck: float64(st.MaxStuck), PgBouncerWait: float64(st.PgBouncerWait), AppPoolPeak: st.AppPoolPeak,
				Probed: st.Probed, Held: st.Held})
		}
		out = append(out, cv)
	}
	return out
}

var capacityHTML = template.Must(template.New("capacity").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>leakbench capacity</title>
<style>body{font-family:'Liberation Sans',Arial,Helvetica,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}svg{max-width:100%;height:auto}</style>
</head><body>
{{.Markdown}}
<h2>Curve</h2>
{{.SVG}}
</body></html>
`))

// WriteCapacityHTML writes a self-contained page: the Markdown report as
// preformatted text and the curve as inline SVG.
func WriteCapacityHTML(w io.Writer, c *CapacitySummary) error {
	var md, svg bytes.Buffer
	if err := WriteCapacityMarkdown(&md, c); err != nil {
		return err
	}
	if err := plots.WriteCapacity(&svg, plots.SVG, CapacityCurves(c)...); err != nil {
		return fmt.Errorf("capacity curve: %w", err)
	}
	return capacityHTML.Execute(w, struct {
		Markdown template.HTML
		SVG      template.HTML
	}{template.HTML("<pre style=\"white-space:pre-wrap\">" + template.HTMLEscapeString(md.String()) + "</pre>"), template.HTML(svg.String())})
}

// WriteCapacity writes a capacity search's files into dir: summary.json,
// report.md, report.html, junit.xml and plots/capacity.png and .svg.
func WriteCapacity(dir string, c *CapacitySummary) error {
	c.SchemaVersion, c.Kind = SchemaVersion, CapacityKind
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("capacity summary: %w", err)
	}
	if err := rundir.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n')); err != nil {
		return fmt.Errorf("write capacity summary: %w", err)
	}
	writers := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.md", func(w io.Writer) error { return WriteCapacityMarkdown(w, c) }},
		{"report.html", func(w io.Writer) error { return WriteCapacityHTML(w, c) }},
		{"junit.xml", func(w io.Writer) error { return WriteCapacityJUnit(w, c) }},
		{"plots/capacity.png", func(w io.Writer) error { return plots.WriteCapacity(w, plots.PNG, CapacityCurves(c)...) }},
		{"plots/capacity.svg", func(w io.Writer) error { return plots.WriteCapacity(w, plots.SVG, CapacityCurves(c)...) }},
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return fmt.Errorf("capacity plots: %w", err)
	}
	for _, f := range writers {
		if err := rundir.WriteFileFunc(filepath.Join(dir, f.name), f.write); err != nil {
			return fmt.Errorf("write capacity %s: %w", f.name, err)
		}
	}
	return nil
}

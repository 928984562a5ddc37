package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/plots"
	"github.com/leakbench/leakbench/reports/sizing"
	"github.com/leakbench/leakbench/reports/usl"
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
func (s *Search) Headline() string {
	switch s.Outcome {
	case Found:
		line := fmt.Sprintf("%s: capacity %s — at %s, %s", s.Name, count(s.Capacity, s.Unit), count(s.FirstBad, s.Unit), s.trippedFirst())
		if s.Resource != "" {
			line += " (" + s.Resource + ")"
		}
		if !s.Resolved {
			line += "; not narrowed to the resolution " + s.Resolution + " within the stages allowed"
		}
		return line
	case AboveMax:
		return fmt.Sprintf("%s: every stage held, up to the search's max of %s: capacity is at least that", s.Name, count(s.Capacity, s.Unit))
	case BelowStart:
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
func (s *Search) trippedFirst() string {
	if s.LimitAtSeconds == nil {
		return s.Limit + " tripped (time not recorded)"
	}
	when := Trip{AtSeconds: s.LimitAtSeconds}.When()
	if len(s.LimitTiedWith) > 0 {
		return fmt.Sprintf("%s and %s tripped together %s (which came first is not recorded)", s.Limit, strings.Join(s.LimitTiedWith, " and "), when)
	}
	return s.Limit + " tripped first " + when
}

// WriteMarkdown writes the search's report in Markdown: the
// headline, the comparison, and each search's stages.
func WriteMarkdown(w io.Writer, c *Summary) error {
	var b strings.Builder
	b.WriteString("# Capacity\n\n")
	if ch := c.Capacity.Change; ch != nil {
		fmt.Fprintf(&b, "**%s**\n\n", ch.Line)
	}
	if sc := CompareSizing(c.Capacity.Searches); sc != nil {
		fmt.Fprintf(&b, "%s.\n\n", format.UpperFirst(sc.Line))
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
		if line := uslLine(s.USL, s.Unit); line != "" {
			b.WriteString(line + "\n\n")
		}
		if sz := s.Sizing; sz != nil {
			fmt.Fprintf(&b, "Sizing, from stage %d's measured hold:\n\n", s.SizingStage)
			for _, line := range sizing.Lines(sz) {
				fmt.Fprintf(&b, "- %s\n", line)
			}
			if len(sz.Missing) > 0 {
				b.WriteString("- Not measured or not given, so not used: " + format.MDEscape(strings.Join(sz.Missing, "; ")) + ".\n")
			}
			b.WriteString("\n")
		}
		b.WriteString("| stage | load | verdict | req/s | errors | p50 / p95 / p99 | service conns | stuck | PgBouncer waiting | hold / request · ceiling P/h | generator |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, st := range s.Stages {
			fmt.Fprintf(&b, "| %d | %s | %s | %.1f | %.1f%% | %s / %s / %s | %s | %s | %s | %s | %s |\n",
				st.Index, count(st.Load, s.Unit), st.verdict(), st.ReqPerSecond, 100*st.ErrorRate,
				capMs(st.P50Ms), capMs(st.P95Ms), capMs(st.P99Ms), capProbed(st, st.ServiceConns), capProbed(st, st.MaxStuck), capProbed(st, st.PgBouncerWait), capHold(st), format.OrDash(st.Generator))
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

// coef writes a fitted coefficient to three significant digits; one
// below 1e-6 is 0 within the fit's precision, and written so.
func coef(v float64) string {
	if math.Abs(v) < 1e-6 {
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

// uslLine says the search's model in one line, or why it predicts
// nothing; "" without one.
func uslLine(f *usl.Fit, unit string) string {
	switch {
	case f == nil:
		return ""
	case !f.Predicts():
		return fmt.Sprintf("Model (%s, over %d stages): no prediction — %s.", f.Model, f.Points, f.Refused)
	}
	line := fmt.Sprintf("Model (%s, fitted to %d stages; a model, not a measurement): λ %.3g req/s per %s, σ %s (contention), κ %s (coherency), R² %.3f",
		f.Model, f.Points, f.Lambda, strings.TrimSuffix(unit, "s"), coef(f.Sigma), coef(f.Kappa), f.R2)
	if f.PeakN > 0 {
		return line + fmt.Sprintf("; it puts the peak at N* = %.0f %s, %.1f req/s.", f.PeakN, unit, f.PeakX)
	}
	if f.Sigma < 1e-6 {
		return line + "; σ and κ are 0, so it has no peak: throughput grows in proportion to the load."
	}
	return line + fmt.Sprintf("; κ is 0, so it has no peak: throughput levels off toward λ/σ = %.1f req/s.", f.Lambda/max(f.Sigma, 1e-12))
}

// verdict is the stage's verdict in a few words.
func (st *Stage) verdict() string {
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

// capHold is the stage's measured hold per request and the ceiling it
// gives the pool: "110 ms · 90.9 req/s"; "—" where not measured.
func capHold(st Stage) string {
	switch {
	case st.HoldSeconds <= 0:
		return "—"
	case st.CeilingReqPerS <= 0:
		return format.Secs(st.HoldSeconds) + " · —"
	}
	return format.Secs(st.HoldSeconds) + " · " + format.Num(st.CeilingReqPerS) + " req/s"
}

func capProbed(st Stage, n int) string {
	if !st.Probed {
		return "—"
	}
	return fmt.Sprint(n)
}

// WriteJUnit writes one suite per search: a case per stage (a
// failure where it broke a limit; inconclusive stages skipped) and a
// case for the required --min.
func WriteJUnit(w io.Writer, c *Summary) error {
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

// Curves are the searches' curves for plots.WriteCapacity.
func Curves(c *Summary) []plots.CapacityCurve {
	var out []plots.CapacityCurve
	for _, s := range c.Capacity.Searches {
		cv := plots.CapacityCurve{Label: s.Name, Unit: s.Unit}
		if s.Outcome != BelowStart {
			cv.Knee = float64(s.Capacity)
		}
		if f := s.USL; f.Predicts() {
			cv.Model = f.At
			cv.ModelLabel = fmt.Sprintf("USL model (σ %s, κ %s, R² %.2f)", coef(f.Sigma), coef(f.Kappa), f.R2)
		}
		for _, st := range s.Stages {
			cv.Points = append(cv.Points, plots.CapacityPoint{Load: float64(st.Load), P50Ms: st.P50Ms, P95Ms: st.P95Ms, P99Ms: st.P99Ms,
				ErrorRate: st.ErrorRate, ReqPerSecond: st.ReqPerSecond, ServiceConns: float64(st.ServiceConns), Stuck: float64(st.MaxStuck), PgBouncerWait: float64(st.PgBouncerWait), AppPoolPeak: st.AppPoolPeak,
				Probed: st.Probed, Held: st.Held})
		}
		out = append(out, cv)
	}
	return out
}

// Write writes a capacity search's files into dir: summary.json,
// report.md, report.html, junit.xml and plots/capacity.png and .svg.
func Write(dir string, c *Summary) error {
	c.SchemaVersion, c.Kind = rundir.SchemaVersion, Kind
	for i := range c.Capacity.Searches {
		if s := &c.Capacity.Searches[i]; s.USL == nil {
			s.USL = s.FitUSL()
		}
	}
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
		{"report.md", func(w io.Writer) error { return WriteMarkdown(w, c) }},
		{"report.html", func(w io.Writer) error { return WriteHTML(w, c) }},
		{"junit.xml", func(w io.Writer) error { return WriteJUnit(w, c) }},
		{"plots/capacity.png", func(w io.Writer) error { return plots.WriteCapacity(w, plots.PNG, Curves(c)...) }},
		{"plots/capacity.svg", func(w io.Writer) error { return plots.WriteCapacity(w, plots.SVG, Curves(c)...) }},
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

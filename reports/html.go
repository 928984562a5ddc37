package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/internal/style"
	"github.com/leakbench/leakbench/reports/plots"
	"github.com/leakbench/leakbench/reports/table"
	"github.com/leakbench/leakbench/reports/verdict"
)

//go:embed report.html.tmpl
var htmlTemplate string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"seconds": seconds,
	"css":     style.CSS,
}).Parse(htmlTemplate))

// htmlView is what the HTML template shows; one column per run.
type htmlView struct {
	Title        string
	Verdict      string
	Pass         bool
	Banners      []string
	Columns      []string
	Table        []htmlRow
	Checks       []verdict.Check
	Plots        []htmlPlot
	Runs         []htmlRun
	Environment  []htmlRow
	Ending       []htmlRow
	Notes        []string
	HasThreshold bool
	// Soak is a soak run's section (soaksection.go); Capacity a sign-off's
	// capacity searches (package reports/capacity, Signoff.HTML).
	Soak     template.HTML
	Capacity template.HTML
	// Sizing is a probed run's Sizing section (sizingsection.go).
	Sizing template.HTML
}

type htmlRow struct {
	Label  string
	Values []string
}

type htmlPlot struct {
	Name, Caption, PNG string
	SVG                template.HTML
}

type htmlRun struct {
	Label      string
	Culprits   []rundir.Culprit
	Thresholds []rundir.Threshold
	Errors     []htmlRow
	Samples    []string
	HTTP       []htmlRow // the http steps (httpsteps.go)
}

// WriteHTML writes the run's report as one self-contained HTML file: the
// verdict, the table, the plots inline as SVG, culprits, thresholds, the
// environment and how the run ended. It loads nothing from anywhere.
func (r *Run) WriteHTML(w io.Writer) error {
	v := newView([]*Run{r}, "leakbench run: "+r.Label())
	v.Checks = verdict.Checks(r.Summary)
	v.Pass = true
	for _, c := range v.Checks {
		v.Pass = v.Pass && c.Pass
	}
	v.Verdict = runVerdict(r.Summary)
	v.Soak = soakHTML(r.Summary)
	v.Sizing = sizingHTML(r.Summary)
	return v.render(w, r)
}

// WriteHTML writes the sign-off's report as one self-contained HTML file,
// before and after side by side. The runs come from CompareRuns or
// RenderComparison; without them only the table and checks are shown.
func (c *Comparison) WriteHTML(w io.Writer) error {
	runs := []*Run{c.before, c.after}
	if c.before == nil || c.after == nil {
		runs = []*Run{{Dir: c.BeforeDir, Summary: c.Before}, {Dir: c.AfterDir, Summary: c.After}}
	}
	title := "leakbench sign-off (fix)"
	if c.Mode == verdict.ModeRegression {
		title = "leakbench regression check"
	}
	v := newView(runs, title)
	v.Checks, v.Pass = c.Checks, c.Pass
	v.Verdict = "PASS — the leak shows in before and is gone in after"
	if c.Mode == verdict.ModeRegression {
		v.Verdict = "PASS — after is no worse than before"
	}
	if !c.Pass {
		v.Verdict = "FAIL — see the checks below"
	}
	v.Verdict += " (question asked — " + c.question() + ")"
	var err error
	if v.Capacity, err = c.Capacity.HTML(); err != nil {
		return err
	}
	return v.render(w, runs...)
}

func newView(runs []*Run, title string) *htmlView {
	v := &htmlView{Title: title}
	for _, r := range runs {
		v.Columns = append(v.Columns, r.Label())
		if r.Summary.Incomplete {
			v.Banners = append(v.Banners, fmt.Sprintf("Incomplete run: %s was killed before it finished and wrote no summary. Its figures are rebuilt from the probe's files and cover only what was recorded; sessions still open when it died are not counted as episodes.", r.Label()))
		}
		for _, n := range r.Notes {
			v.Notes = append(v.Notes, r.Label()+": "+n)
		}
	}
	sums := make([]*rundir.Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
	}
	for _, row := range table.For(sums...) {
		hr := htmlRow{Label: strings.ReplaceAll(row.Label, "`", "")}
		for _, r := range runs {
			hr.Values = append(hr.Values, row.Value(r.Summary))
		}
		v.Table = append(v.Table, hr)
	}
	v.Environment = rowsOf(runs, table.Environment)
	v.Ending = rowsOf(runs, table.Ending)
	if slices.ContainsFunc(runs, func(r *Run) bool { return r.LoadEndReason != "" || r.DroppedIterations > 0 }) {
		hr := htmlRow{Label: "Load end reason / dropped iterations"}
		for _, r := range runs {
			hr.Values = append(hr.Values, fmt.Sprintf("%s / %d", orDash(r.LoadEndReason), r.DroppedIterations))
		}
		v.Ending = append(v.Ending, hr)
	}
	for _, r := range runs {
		hr := htmlRun{Label: r.Label(), Thresholds: r.Thresholds}
		if p := r.Summary.Probe; p != nil {
			hr.Culprits = p.Culprits
		}
		if l := r.Summary.Load; l != nil {
			for _, k := range errorKinds(l) {
				hr.Errors = append(hr.Errors, htmlRow{Label: k, Values: []string{fmt.Sprint(l.ErrorsByKind[k]) + firstErrorText(l, k)}})
			}
			hr.Samples = l.ErrorSamples
			hr.HTTP = htmlHTTPSteps(l)
		}
		v.HasThreshold = v.HasThreshold || len(r.Thresholds) > 0
		v.Runs = append(v.Runs, hr)
	}
	return v
}

func (v *htmlView) render(w io.Writer, runs ...*Run) error {
	withData := runs[:0:0]
	for _, r := range runs {
		if len(r.Samples)+len(r.Episodes)+len(r.Load) > 0 {
			withData = append(withData, r)
		}
	}
	drawn := plotRuns(withData...)
	for _, name := range plots.Names(drawn...) {
		var buf bytes.Buffer
		if err := plots.Write(&buf, name, plots.SVG, drawn...); err != nil {
			return err
		}
		v.Plots = append(v.Plots, htmlPlot{Name: name, Caption: plots.Caption(name), PNG: rundir.PlotsDir + "/" + name + ".png", SVG: inlineSVG(buf.Bytes())})
	}
	return reportTemplate.Execute(w, v)
}

// inlineSVG drops the XML prelude so the SVG can sit inside HTML. The SVG
// comes from gonum/plot, which escapes every text it draws.
func inlineSVG(svg []byte) template.HTML {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return template.HTML(svg) // #nosec: generated here, text escaped by vgsvg.
}

func rowsOf(runs []*Run, rows []table.Row) []htmlRow {
	var out []htmlRow
	for _, row := range rows {
		hr := htmlRow{Label: row.Label}
		for _, r := range runs {
			hr.Values = append(hr.Values, row.Value(r.Summary))
		}
		out = append(out, hr)
	}
	return out
}

// orDash is s, or a dash when it is empty.
var orDash = format.OrDash

package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/plots"
)

//go:embed report.html.tmpl
var htmlTemplate string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"seconds": seconds,
}).Parse(htmlTemplate))

// htmlView is what the HTML template shows; one column per run.
type htmlView struct {
	Title        string
	Verdict      string
	Pass         bool
	Banners      []string
	Columns      []string
	Table        []htmlRow
	Checks       []Check
	Plots        []htmlPlot
	Runs         []htmlRun
	Environment  []htmlRow
	Ending       []htmlRow
	Notes        []string
	HasThreshold bool
	// Soak is a soak run's section (soaksection.go); Capacity a sign-off's
	// capacity searches (signoff_capacity.go).
	Soak     template.HTML
	Capacity template.HTML
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
	Culprits   []probes.Culprit
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
	v.Checks = RunChecks(r.Summary)
	v.Pass = true
	for _, c := range v.Checks {
		v.Pass = v.Pass && c.Pass
	}
	v.Verdict = runVerdict(r.Summary)
	v.Soak = soakHTML(r.Summary)
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
	v := newView(runs, "leakbench sign-off")
	v.Checks, v.Pass = c.Checks, c.Pass
	v.Verdict = "PASS — the leak shows in before and is gone in after"
	if !c.Pass {
		v.Verdict = "FAIL — see the checks below"
	}
	var err error
	if v.Capacity, err = c.Capacity.html(); err != nil {
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
	sums := make([]*Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary
	}
	for _, row := range rowsFor(sums...) {
		hr := htmlRow{Label: strings.ReplaceAll(row.label, "`", "")}
		for _, r := range runs {
			hr.Values = append(hr.Values, row.value(r.Summary))
		}
		v.Table = append(v.Table, hr)
	}
	v.Environment = rowsOf(runs, environmentRows)
	v.Ending = rowsOf(runs, endingRows)
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
				hr.Errors = append(hr.Errors, htmlRow{Label: k, Values: []string{fmt.Sprint(l.ErrorsByKind[k])}})
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

func rowsOf(runs []*Run, rows []metricRow) []htmlRow {
	var out []htmlRow
	for _, row := range rows {
		hr := htmlRow{Label: row.label}
		for _, r := range runs {
			hr.Values = append(hr.Values, row.value(r.Summary))
		}
		out = append(out, hr)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// environmentRows describe what a run ran against.
var environmentRows = []metricRow{
	{"Gateway variant", func(s *Summary) string {
		if s.Environment.Provider == "external" {
			return "— (your own service: " + orDash(s.Name) + ")"
		}
		return orDash(s.Environment.Variant)
	}},
	{"Profile", func(s *Summary) string { return orDash(s.Profile) }},
	{"PostgreSQL", func(s *Summary) string { return orDash(s.Environment.PostgresVersion) }},
	{"idle_in_transaction_session_timeout", func(s *Summary) string { return timeoutSetting(s.Environment.IdleInTxTimeoutSeconds) }},
	{"max_connections", func(s *Summary) string { return positiveOrUnknown(s.Environment.MaxConnections) }},
	{"PgBouncer", func(s *Summary) string {
		if !pgbouncerSeen(s) {
			return "not probed"
		}
		return orDash(s.Environment.PgBouncerVersion)
	}},
	{"PgBouncer pool mode / pool size", func(s *Summary) string {
		if !pgbouncerSeen(s) {
			return "not probed"
		}
		return orDash(s.Environment.PoolMode) + " / " + positiveOrUnknown(s.Environment.PgBouncerPoolSize)
	}},
	{"Service (gateway) pool size", func(s *Summary) string {
		if s.Environment.GatewayPoolSize > 0 {
			return fmt.Sprint(s.Environment.GatewayPoolSize)
		}
		if s.Probe != nil && s.Probe.AppPoolSampled && s.Probe.AppPoolMax > 0 {
			return fmt.Sprintf("%g (from its metrics)", s.Probe.AppPoolMax)
		}
		return "unknown (no pool metrics)"
	}},
	{"Stack provider / target", func(s *Summary) string {
		return orDash(s.Environment.Provider) + " / " + orDash(s.Environment.Target)
	}},
	{"Scenario", scenarioText},
	{"Probe interval / stuck threshold", func(s *Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return seconds(s.Probe.IntervalSeconds) + " / " + seconds(s.Probe.StuckAfterSeconds)
	}},
	{"leakbench version / commit", func(s *Summary) string {
		return orDash(s.Environment.LeakbenchVersion) + " / " + orDash(s.Environment.LeakbenchCommit)
	}},
}

// scenarioText is the run's scenario in one line, from the plan it played;
// a result without one (recorded before plans) has its users and timeout.
func scenarioText(s *Summary) string {
	switch {
	case s.Load == nil:
		return "—"
	case recordedPlan(s) != nil:
		return recordedPlan(s).Describe()
	case s.Load.Config.Users > 0:
		c := s.Load.Config
		return fmt.Sprintf("%d users for %s; request timeout %s", c.Users, c.Duration, c.RequestTimeout)
	}
	return "—"
}

// endingRows say how a run ended.
var endingRows = []metricRow{
	{"Ended", func(s *Summary) string {
		if s.Error != "" {
			return s.EndReason + " — " + s.Error
		}
		return s.EndReason
	}},
	{"Started / duration", func(s *Summary) string {
		if s.Started.IsZero() {
			return "—"
		}
		return s.Started.UTC().Format(time.RFC3339) + " / " + s.Ended.Sub(s.Started).Round(100*time.Millisecond).String()
	}},
	{"Load interrupted / users aborted / peak users", func(s *Summary) string {
		if s.Load == nil {
			return "—"
		}
		return fmt.Sprintf("%t / %d / %d", s.Load.Interrupted, s.Load.AbortedUsers, s.Load.PeakUsers)
	}},
	{"Iterations / re-initializations / init retries", func(s *Summary) string {
		if s.Load == nil {
			return "—"
		}
		return fmt.Sprintf("%d / %d / %d", s.Load.Iterations, s.Load.Reinits, s.Load.InitRetries)
	}},
	{"Probe samples (failed)", func(s *Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return fmt.Sprintf("%d (%d)", s.Probe.Samples, s.Probe.FailedSamples)
	}},
	{"Idle-in-transaction episodes", func(s *Summary) string {
		if s.Probe == nil {
			return "—"
		}
		return fmt.Sprint(s.Probe.Episodes)
	}},
}

// positiveOrUnknown is n, or "unknown" when it was not observed (0).
func positiveOrUnknown(n int) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

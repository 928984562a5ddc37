package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/plots"
	"github.com/leakbench/leakbench/reports/table"
	"github.com/leakbench/leakbench/reports/verdict"
)

// MultiKind marks a combined report's compare.json, so that a reader can
// tell it from a single sign-off's.
const MultiKind = "signoff-all"

// MultiSignoff is one sign-off per leak pattern and one verdict: it passes
// only when every pattern's sign-off does (`leakbench signoff --profile
// all`). Each pattern's own sign-off lives in a subdirectory, Dir.
type MultiSignoff struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"`
	Pass          bool   `json:"pass"`
	// Failed names the patterns whose sign-off failed or could not be done.
	Failed   []string         `json:"failed,omitempty"`
	Patterns []PatternSignoff `json:"patterns"`
}

// PatternSignoff is one pattern's sign-off within a MultiSignoff.
type PatternSignoff struct {
	// Name is the profile's (ci, waiting, …); Pattern the leak it shows
	// (the before variant).
	Name          string `json:"name"`
	Pattern       string `json:"pattern"`
	VariantBefore string `json:"variant_before"`
	VariantAfter  string `json:"variant_after"`
	// Dir is the pattern's sign-off directory, relative to the combined
	// report's.
	Dir  string `json:"dir"`
	Pass bool   `json:"pass"`
	// Error says why the sign-off could not be done (its runs failed);
	// Comparison is then nil or partial.
	Error           string      `json:"error,omitempty"`
	DurationSeconds float64     `json:"duration_seconds"`
	Comparison      *Comparison `json:"comparison,omitempty"`
}

// NewMultiSignoff combines the patterns' sign-offs into one verdict.
func NewMultiSignoff(patterns []PatternSignoff) *MultiSignoff {
	m := &MultiSignoff{SchemaVersion: rundir.SchemaVersion, Kind: MultiKind, Pass: len(patterns) > 0, Patterns: patterns}
	for i := range m.Patterns {
		p := &m.Patterns[i]
		p.Pass = p.Error == "" && p.Comparison != nil && p.Comparison.Pass
		if !p.Pass {
			m.Pass = false
			m.Failed = append(m.Failed, p.Name)
		}
	}
	return m
}

// RenderMultiSignoff writes the combined report into dir: compare.json
// (the MultiSignoff), report.md, report.html (self-contained; each
// pattern's signature plot inline) and junit.xml (one suite per pattern).
// Each pattern's own report is in its directory. The Markdown overview
// goes to $GITHUB_STEP_SUMMARY too, after the patterns' own reports.
func RenderMultiSignoff(dir string, m *MultiSignoff) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := writeJSON(filepath.Join(dir, rundir.CompareFile), m); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := writeBytes(filepath.Join(dir, rundir.ReportFile), md.Bytes()); err != nil {
		return err
	}
	for _, doc := range []struct {
		name  string
		write func(io.Writer) error
	}{{rundir.HTMLFile, m.WriteHTML}, {rundir.JUnitFile, m.WriteJUnit}} {
		var buf bytes.Buffer
		if err := doc.write(&buf); err != nil {
			return err
		}
		if err := writeBytes(filepath.Join(dir, doc.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return appendStepSummary(md.Bytes())
}

func (m *MultiSignoff) verdict() string {
	if m.Pass {
		return fmt.Sprintf("PASS — every pattern's leak shows in before and is gone in after (%d patterns)", len(m.Patterns))
	}
	return fmt.Sprintf("FAIL — %s: see %s", plural(len(m.Failed), "pattern"), strings.Join(m.Failed, ", "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (p *PatternSignoff) verdict() string {
	switch {
	case p.Pass:
		return "PASS"
	case p.Error != "":
		return "ERROR"
	}
	return "FAIL"
}

// headline is the pattern's before/after in one line: what the leak did in
// before, what is left of it in after.
func (p *PatternSignoff) headline() (before, after string) {
	if p.Comparison == nil {
		return "—", "—"
	}
	return leakLine(p.Comparison.Before), leakLine(p.Comparison.After)
}

// leakLine: stuck sessions, kills and the pool, the figures every pattern's
// signature is read from.
func leakLine(s *rundir.Summary) string {
	if s == nil || s.Probe == nil {
		return "no probe data"
	}
	p := s.Probe
	line := fmt.Sprintf("%d stuck (max %d at once), %d killed, release p99 %s", p.StuckEpisodes, p.MaxStuckIdleInTx, p.TimeoutTerminated, seconds(p.ReleaseP99Seconds))
	if p.Episodes == 0 {
		line = fmt.Sprintf("%d stuck, %d killed, no episode", p.StuckEpisodes, p.TimeoutTerminated)
	}
	if s.Pool != nil && s.Pool.Exhausted {
		line += "; pool exhausted — " + s.Pool.Reason
	} else if s.Pool != nil && (s.Pool.PgBouncerSampled || s.Pool.AppPoolSampled) {
		line += "; pool healthy"
	}
	return line
}

// WriteMarkdown writes the combined verdict, one line per pattern, then a
// section per pattern: its table, checks and top culprit, and links to its
// own report.
func (m *MultiSignoff) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# leakbench sign-off of every pattern: %s\n\n", m.verdict())
	b.WriteString("| pattern | profile | verdict | before | after | took |\n|---|---|---|---|---|---:|\n")
	for i := range m.Patterns {
		p := &m.Patterns[i]
		before, after := p.headline()
		fmt.Fprintf(&b, "| `%s` | [%s](#%s) | %s | %s | %s | %s |\n", mdEscape(p.Pattern), mdEscape(p.Name), anchor(p.Name), p.verdict(),
			mdEscape(before), mdEscape(after), took(p.DurationSeconds))
	}
	for i := range m.Patterns {
		p := &m.Patterns[i]
		fmt.Fprintf(&b, "\n## %s\n\n**%s** — `%s` (before) against `%s` (after), %s. ", mdEscape(p.Name), p.verdict(), mdEscape(p.VariantBefore), mdEscape(p.VariantAfter), took(p.DurationSeconds))
		fmt.Fprintf(&b, "Its sign-off: [%s/%s](%s/%s), [%s/%s](%s/%s).\n", p.Dir, rundir.ReportFile, p.Dir, rundir.ReportFile, p.Dir, rundir.HTMLFile, p.Dir, rundir.HTMLFile)
		if p.Error != "" {
			fmt.Fprintf(&b, "\nThe sign-off could not be done: %s\n", mdEscape(p.Error))
		}
		c := p.Comparison
		if c == nil || c.Before == nil || c.After == nil {
			continue
		}
		fmt.Fprintf(&b, "\n| | before (`%s`) | after (`%s`) |\n|---|---|---|\n", mdEscape(columnName(c.Before)), mdEscape(columnName(c.After)))
		for _, row := range table.For(c.Before, c.After) {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", row.Label, row.Value(c.Before), row.Value(c.After))
		}
		b.WriteString("\n")
		writeChecks(&b, c.Checks)
		writeCulprits(&b, "Culprits in before:", c.Before, 1)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// anchor is the id GitHub's Markdown gives a "## name" heading.
func anchor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func took(s float64) string {
	if s <= 0 {
		return "—"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// WriteTable writes each pattern's before/after table and checks for a
// terminal, then the combined verdict.
func (m *MultiSignoff) WriteTable(w io.Writer) error {
	for i := range m.Patterns {
		p := &m.Patterns[i]
		if _, err := fmt.Fprintf(w, "== %s: %s against %s — %s (%s)\n", p.Name, p.VariantBefore, p.VariantAfter, p.verdict(), took(p.DurationSeconds)); err != nil {
			return err
		}
		if p.Error != "" {
			if _, err := fmt.Fprintf(w, "could not be done: %s\n", p.Error); err != nil {
				return err
			}
		}
		if c := p.Comparison; c != nil && c.Before != nil && c.After != nil {
			if err := c.WriteTable(w); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s\n", m.verdict())
	return err
}

// WriteJUnit writes one suite of checks per pattern (classname
// leakbench.signoff.NAME) and the after runs' thresholds; a pattern whose
// sign-off could not be done is one failed case.
func (m *MultiSignoff) WriteJUnit(w io.Writer) error {
	var suites []junit.Suite
	for i := range m.Patterns {
		p := &m.Patterns[i]
		class := "leakbench.signoff." + p.Name
		name := fmt.Sprintf("sign-off %s: %s against %s", p.Name, p.VariantBefore, p.VariantAfter)
		var s junit.Suite
		if p.Comparison != nil {
			s = checkSuite(name, class, p.Comparison.Checks)
		} else {
			s = junit.Suite{Name: name}
		}
		if p.Error != "" {
			s.Add(junit.Case{Name: "sign-off could be done", Classname: class,
				Failure: &junit.Message{Message: p.Error, Type: "SignoffError", Text: p.Error}})
		}
		suites = append(suites, s)
		if c := p.Comparison; c != nil && c.after != nil {
			suites = append(suites, thresholdSuite("thresholds "+p.Name+": "+c.after.Label(), class+".after", c.after.Thresholds, false))
		}
	}
	return writeJUnit(w, "leakbench sign-off of every pattern", suites)
}

// WriteHTML writes the combined report as one self-contained HTML file:
// the verdict, one line per pattern, and per pattern its table, checks and
// signature plot (inline SVG), with links to its own report.
func (m *MultiSignoff) WriteHTML(w io.Writer) error {
	v := multiView{Title: "leakbench sign-off of every pattern", Verdict: m.verdict(), Pass: m.Pass}
	for i := range m.Patterns {
		p := &m.Patterns[i]
		before, after := p.headline()
		pv := multiPattern{Name: p.Name, Anchor: anchor(p.Name), Pattern: p.Pattern, VariantBefore: p.VariantBefore, VariantAfter: p.VariantAfter,
			Verdict: p.verdict(), Pass: p.Pass, Error: p.Error, Took: took(p.DurationSeconds), Before: before, After: after,
			Report: p.Dir + "/" + rundir.HTMLFile, Markdown: p.Dir + "/" + rundir.ReportFile}
		if c := p.Comparison; c != nil && c.Before != nil && c.After != nil {
			pv.Checks = c.Checks
			for _, row := range table.For(c.Before, c.After) {
				pv.Table = append(pv.Table, htmlRow{Label: strings.ReplaceAll(row.Label, "`", ""), Values: []string{row.Value(c.Before), row.Value(c.After)}})
			}
			if c.Before.Probe != nil && len(c.Before.Probe.Culprits) > 0 {
				pv.Culprit = truncate(c.Before.Probe.Culprits[0].Fingerprint, 300)
			}
			if c.before != nil && c.after != nil {
				name := signaturePlot(c)
				var buf bytes.Buffer
				if err := plots.Write(&buf, name, plots.SVG, plotRuns(c.before, c.after)...); err == nil {
					pv.Plot = &htmlPlot{Name: name, Caption: plots.Caption(name), PNG: p.Dir + "/" + rundir.PlotsDir + "/" + name + ".png", SVG: inlineSVG(buf.Bytes())}
				}
			}
		}
		v.Patterns = append(v.Patterns, pv)
	}
	return multiTemplate.Execute(w, v)
}

// signaturePlot is the plot a pattern's leak shows best in: stuck sessions,
// or the service's pool when before held connections without a
// transaction.
func signaturePlot(c *Comparison) string {
	if p := c.Before.Probe; p != nil && p.StuckEpisodes == 0 && verdict.PoolPinned(p) {
		return plots.AppPool
	}
	return plots.Stuck
}

type multiView struct {
	Title, Verdict string
	Pass           bool
	Patterns       []multiPattern
}

type multiPattern struct {
	Name, Anchor, Pattern, VariantBefore, VariantAfter string
	Verdict, Error, Took, Before, After                string
	Pass                                               bool
	Report, Markdown, Culprit                          string
	Table                                              []htmlRow
	Checks                                             []verdict.Check
	Plot                                               *htmlPlot
}

var multiTemplate = template.Must(template.New("multi").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>
:root { --fg: #1a1a1a; --bg: #ffffff; --muted: #5c5c5c; --line: #d0d0d0; --head: #f3f3f3;
  --pass: #0b6b3a; --pass-bg: #e3f4ea; --fail: #a3260a; --fail-bg: #fbe6df; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8e8e8; --bg: #15171a; --muted: #a8a8a8; --line: #3a3d42; --head: #22252a;
    --pass: #7fdca4; --pass-bg: #123222; --fail: #ff9f85; --fail-bg: #3d1a12; }
}
body { margin: 0 auto; max-width: 1400px; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .75rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.verdict { font-size: 1.3rem; font-weight: 700; padding: .8rem 1rem; border-radius: 6px; margin: 0 0 1rem; }
.verdict.pass, .mark.pass { color: var(--pass); background: var(--pass-bg); }
.verdict.fail, .mark.fail { color: var(--fail); background: var(--fail-bg); }
.verdict.pass { border-left: 6px solid var(--pass); } .verdict.fail { border-left: 6px solid var(--fail); }
.mark { font-weight: 700; padding: 0 .4rem; border-radius: 4px; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; vertical-align: top; }
thead th { background: var(--head); }
tbody th { font-weight: 600; width: 28%; }
ul.checks { list-style: none; padding: 0; }
code { font: 13px/1.4 ui-monospace, "Liberation Mono", Menlo, Consolas, monospace; }
figure.plot { margin: 1rem 0 1.5rem; padding: .5rem; background: #ffffff; border: 1px solid var(--line); border-radius: 6px; }
figure.plot svg { display: block; width: 100%; height: auto; }
figcaption { color: #333333; font-size: .9rem; padding: .4rem .25rem 0; }
figcaption a { color: #0a58ca; }
.muted { color: var(--muted); }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="verdict {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
<table id="patterns">
<thead><tr><th>pattern</th><th>profile</th><th>verdict</th><th>before</th><th>after</th><th>took</th></tr></thead>
<tbody>
{{range .Patterns}}<tr><td><code>{{.Pattern}}</code></td><td><a href="#{{.Anchor}}">{{.Name}}</a></td><td><span class="mark {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span></td><td>{{.Before}}</td><td>{{.After}}</td><td>{{.Took}}</td></tr>
{{end}}</tbody>
</table>
{{range .Patterns}}
<h2 id="{{.Anchor}}">{{.Name}} <span class="mark {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</span></h2>
<p><code>{{.VariantBefore}}</code> (before) against <code>{{.VariantAfter}}</code> (after), {{.Took}}. Its own sign-off: <a href="{{.Report}}">report.html</a>, <a href="{{.Markdown}}">report.md</a>.</p>
{{if .Error}}<p class="verdict fail">The sign-off could not be done: {{.Error}}</p>{{end}}
{{if .Table}}<table>
<thead><tr><th></th><th>before ({{.VariantBefore}})</th><th>after ({{.VariantAfter}})</th></tr></thead>
<tbody>
{{range .Table}}<tr><th>{{.Label}}</th>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{if .Checks}}<ul class="checks">
{{range .Checks}}<li><span class="mark {{if .Pass}}pass{{else}}fail{{end}}">{{if .Pass}}pass{{else}}FAIL{{end}}</span> {{.Name}} — <span class="muted">{{.Detail}}</span></li>
{{end}}</ul>{{end}}
{{if .Culprit}}<p>Top culprit in before: <code>{{.Culprit}}</code></p>{{end}}
{{with .Plot}}<figure class="plot">{{.SVG}}<figcaption>{{.Caption}} <a href="{{.PNG}}">PNG</a></figcaption></figure>{{end}}
{{end}}
</body>
</html>
`))

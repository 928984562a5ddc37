package trend

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/app/history"
)

// column is one figure of the entries table.
type column struct {
	head  string
	value func(*history.Entry) string
}

func secs(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.0f ms", v*1000)
	}
	return fmt.Sprintf("%.2f s", v)
}

func probe(e *history.Entry, f func(history.Figures) string) string {
	if !e.Figures.ProbeRecorded {
		return "n/a"
	}
	return f(e.Figures)
}

func load(e *history.Entry, f func(history.Figures) string) string {
	if !e.Figures.LoadRecorded {
		return "n/a"
	}
	return f(e.Figures)
}

var columns = []column{
	{"release p50 / p99 / max", func(e *history.Entry) string {
		return probe(e, func(f history.Figures) string {
			if f.Episodes == 0 {
				return "no episode"
			}
			return secs(f.ReleaseP50Seconds) + " / " + secs(f.ReleaseP99Seconds) + " / " + secs(f.ReleaseMaxSeconds)
		})
	}},
	{"max stuck at once", func(e *history.Entry) string {
		return probe(e, func(f history.Figures) string { return fmt.Sprint(f.MaxStuckIdleInTx) })
	}},
	{"stuck episodes / killed", func(e *history.Entry) string {
		return probe(e, func(f history.Figures) string { return fmt.Sprintf("%d / %d", f.StuckEpisodes, f.TimeoutTerminated) })
	}},
	{"pool", func(e *history.Entry) string {
		return probe(e, func(f history.Figures) string {
			s := "healthy"
			if f.PoolExhausted {
				s = "exhausted"
			}
			return fmt.Sprintf("%s, %g waits, worst %s", s, f.AppPoolAcquireWaits, secs(f.PoolWorstWaitSeconds))
		})
	}},
	{"request rate", func(e *history.Entry) string {
		return load(e, func(f history.Figures) string { return fmt.Sprintf("%.1f/s", f.RequestRate) })
	}},
	{"error rate", func(e *history.Entry) string {
		return load(e, func(f history.Figures) string { return fmt.Sprintf("%.2f%%", 100*f.ErrorRate) })
	}},
	{"latency p95 / p99", func(e *history.Entry) string {
		return load(e, func(f history.Figures) string {
			return fmt.Sprintf("%.0f / %.0f ms", f.LatencyP95Ms, f.LatencyP99Ms)
		})
	}},
}

// verdict is an entry's verdict in words, with its regressions.
func verdict(e *history.Entry) string {
	s := "pass"
	if !e.Pass {
		s = "FAIL"
	}
	if b := e.Baseline; b != nil && b.Regressed {
		var names []string
		for _, d := range b.Regressions() {
			names = append(names, d.Label)
		}
		s += " (regressed: " + strings.Join(names, ", ") + ")"
	} else if !e.VerdictPass {
		s += " (checks failed)"
	}
	return s
}

// WriteMarkdown writes the entries as a Markdown table, oldest first.
func (t *Trend) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", t.Title)
	if t.Service != "" {
		fmt.Fprintf(&b, "%d entries of profile `%s`, your own service `%s`", len(t.Entries), t.Profile, t.Service)
	} else {
		fmt.Fprintf(&b, "%d entries of profile `%s`, after variant `%s`", len(t.Entries), t.Profile, t.Variant)
	}
	if t.Baseline >= 0 {
		e := t.Entries[t.Baseline]
		fmt.Fprintf(&b, "; baseline (**◆**): `%s`, release `%s`", e.ID, mdCell(e.Release))
	}
	b.WriteString(".\n\n| # | recorded (UTC) | release | kind | verdict |")
	for _, c := range columns {
		b.WriteString(" " + c.head + " |")
	}
	b.WriteString("\n|---:|---|---|---|---|" + strings.Repeat("---:|", len(columns)) + "\n")
	for i, e := range t.Entries {
		mark := ""
		if i == t.Baseline {
			mark = " **◆**"
		}
		fmt.Fprintf(&b, "| %d%s | %s | `%s` | %s | %s |", i+1, mark, recorded(e), mdCell(e.Release), e.Kind, verdict(e))
		for _, c := range columns {
			b.WriteString(" " + c.value(e) + " |")
		}
		b.WriteString("\n")
	}
	for _, l := range t.Left {
		fmt.Fprintf(&b, "\nLeft out: %s (`--profile`, `--variant` select them).\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "`", "'")
	return strings.Join(strings.Fields(s), " ")
}

// The page loads nothing: the Content-Security-Policy forbids every fetch
// and allows only the inline style, as the run reports do.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: .9rem; }
th, td { border: 1px solid #ccc; padding: .3rem .5rem; text-align: right; }
th { background: #f3f3f3; }
td.l, th.l { text-align: left; }
tr.baseline td { background: #eef4ff; font-weight: 600; }
tr.fail td.v { color: #b00000; font-weight: 600; }
figure { margin: 1.5rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: .9rem; }
.note { color: #555; }
code { font-size: .9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>{{len .Entries}} entries of profile <code>{{.Profile}}</code>, {{if .Service}}your own service <code>{{.Service}}</code>{{else}}after variant <code>{{.Variant}}</code>{{end}}, oldest first.
{{if .Base}}Baseline (◆, dashed line on the plots): <code>{{.Base.ID}}</code>, release <code>{{.Base.Release}}</code>.{{else}}No baseline marked.{{end}}
Failed entries are red crosses on the plots.</p>
{{range .Left}}<p class="note">Left out: {{.}}.</p>
{{end}}
<table>
<thead><tr><th>#</th><th class="l">recorded (UTC)</th><th class="l">release</th><th class="l">kind</th><th class="l">verdict</th>{{range .Heads}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr class="{{if .Baseline}}baseline{{end}}{{if .Fail}} fail{{end}}" id="{{.ID}}"><td>{{.N}}{{if .Baseline}} ◆{{end}}</td><td class="l">{{.Recorded}}</td><td class="l"><code>{{.Release}}</code></td><td class="l">{{.Kind}}</td><td class="l v">{{.Verdict}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{range .Plots}}<figure id="plot-{{.Name}}">
{{.SVG}}
<figcaption>{{.Caption}} (<code>plots/{{.Name}}.png</code>, <code>plots/{{.Name}}.svg</code>)</figcaption>
</figure>
{{end}}
<p class="note">Written by <code>leakbench trend</code> from the history directory; format: internal/app/history/FORMAT.md.</p>
</body>
</html>
`

var page = template.Must(template.New("trend").Parse(pageTemplate))

type htmlRow struct {
	N                           int
	ID, Recorded, Release, Kind string
	Verdict                     string
	Baseline, Fail              bool
	Values                      []string
}

type htmlPlot struct {
	Name, Caption string
	SVG           template.HTML
}

// svgStart finds the <svg element, past the XML declaration vgsvg writes.
func svgBody(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		return svg[i:]
	}
	return svg
}

func (t *Trend) writeHTML(w io.Writer, svgs map[string][]byte) error {
	v := struct {
		*Trend
		Base  *history.Entry
		Heads []string
		Rows  []htmlRow
		Plots []htmlPlot
	}{Trend: t}
	if t.Baseline >= 0 {
		v.Base = t.Entries[t.Baseline]
	}
	for _, c := range columns {
		v.Heads = append(v.Heads, c.head)
	}
	for i, e := range t.Entries {
		r := htmlRow{N: i + 1, ID: e.ID, Recorded: recorded(e), Release: e.Release, Kind: e.Kind, Verdict: verdict(e),
			Baseline: i == t.Baseline, Fail: !e.Pass}
		for _, c := range columns {
			r.Values = append(r.Values, c.value(e))
		}
		v.Rows = append(v.Rows, r)
	}
	for _, p := range Plots() {
		// The SVG is gonum's own output, made here from numbers: no text
		// in it comes from outside but the release labels, which vgsvg
		// escapes.
		v.Plots = append(v.Plots, htmlPlot{Name: p.Name, Caption: p.Caption, SVG: template.HTML(svgBody(svgs[p.Name]))})
	}
	return page.Execute(w, v)
}

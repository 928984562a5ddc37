package capacity

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/internal/style"
	"github.com/leakbench/leakbench/reports/plots"
	"github.com/leakbench/leakbench/reports/sizing"
)

// The capacity page is drawn as the run and sign-off reports are: the
// verdict first, real tables, the curve inline, in their style sheet
// (package reports/internal/style, shared so that the pages cannot drift
// apart).
var capacityHTML = template.Must(template.New("capacity").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>leakbench capacity</title>
<style>
{{.CSS}}</style>
</head>
<body>
<h1>leakbench capacity</h1>
<p class="verdict {{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
<ul class="checks">
{{range .Headlines}}<li>{{.}}</li>
{{end}}</ul>
{{range .Searches}}
<h2>{{.Name}}</h2>
<p>Limits: {{.Limits}}.</p>
{{if .Model}}<p>{{.Model}}</p>{{end}}
<table>
<thead><tr><th>stage</th><th>load</th><th>verdict</th><th>req/s</th><th>errors</th><th>p50 / p95 / p99</th><th>service conns</th><th>stuck</th><th>PgBouncer waiting</th><th>hold / request · ceiling P/h</th><th>generator</th><th>run directory</th></tr></thead>
<tbody>
{{range .Stages}}<tr>{{range $i, $c := .}}{{if or (eq $i 0) (eq $i 3) (eq $i 4)}}<td class="num">{{$c}}</td>{{else if eq $i 11}}<td><code>{{$c}}</code></td>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
{{.Sizing}}
{{end}}
<h2>Curve</h2>
<figure class="plot" id="plot-capacity">
{{.SVG}}
<figcaption>Throughput (with the model fitted to it, dashed), latency, errors and the pools by load; the knee dashed. <a href="plots/capacity.png">PNG</a></figcaption>
</figure>
</body>
</html>
`))

type capSearchView struct {
	Name, Limits, Model string
	Stages              [][]string
	Sizing              template.HTML
}

// capacityVerdict is the page's first line: the change between two
// searches, else the one search's headline; it passes unless a search
// was inconclusive or missed its --min.
func capacityVerdict(c *Summary) (string, bool) {
	pass := true
	for _, s := range c.Capacity.Searches {
		if s.Outcome == Inconclusive || s.MinPass != nil && !*s.MinPass {
			pass = false
		}
	}
	switch {
	case c.Capacity.Change != nil:
		return c.Capacity.Change.Line, pass
	case len(c.Capacity.Searches) > 0:
		return c.Capacity.Searches[0].Headline(), pass
	}
	return "no search ran", false
}

// WriteHTML writes a self-contained page: the verdict, each
// search's stages as a table with its model and sizing, and the curve as
// inline SVG.
func WriteHTML(w io.Writer, c *Summary) error {
	var svg bytes.Buffer
	if err := plots.WriteCapacity(&svg, plots.SVG, Curves(c)...); err != nil {
		return fmt.Errorf("capacity curve: %w", err)
	}
	v := struct {
		CSS       template.CSS
		Verdict   string
		Pass      bool
		Headlines []string
		Searches  []capSearchView
		SVG       template.HTML
	}{CSS: style.CSS(), SVG: template.HTML(svg.String())}
	v.Verdict, v.Pass = capacityVerdict(c)
	if sc := CompareSizing(c.Capacity.Searches); sc != nil {
		v.Headlines = append(v.Headlines, format.UpperFirst(sc.Line))
	}
	for i := range c.Capacity.Searches {
		s := &c.Capacity.Searches[i]
		line := s.Headline()
		if s.Min > 0 && s.MinPass != nil {
			word := "met"
			if !*s.MinPass {
				word = "NOT met"
			}
			line += fmt.Sprintf(" — required %d %s: %s", s.Min, s.Unit, word)
		}
		v.Headlines = append(v.Headlines, line)
		sv := capSearchView{Name: s.Name, Limits: strings.Join(s.Limits, "; "), Model: uslLine(s.USL, s.Unit)}
		for _, st := range s.Stages {
			sv.Stages = append(sv.Stages, []string{fmt.Sprint(st.Index), count(st.Load, s.Unit), st.verdict(), fmt.Sprintf("%.1f", st.ReqPerSecond),
				fmt.Sprintf("%.1f%%", 100*st.ErrorRate), capMs(st.P50Ms) + " / " + capMs(st.P95Ms) + " / " + capMs(st.P99Ms),
				capProbed(st, st.ServiceConns), capProbed(st, st.MaxStuck), capProbed(st, st.PgBouncerWait), capHold(st), format.OrDash(st.Generator), st.Dir})
		}
		if s.Sizing != nil {
			sv.Sizing = sizing.SectionHTML(s.Sizing, fmt.Sprintf("Sizing, from stage %d's measured hold", s.SizingStage))
		}
		v.Searches = append(v.Searches, sv)
	}
	return capacityHTML.Execute(w, v)
}

package sizing

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Lines says the sizing in sentences: the ceiling, the pool the
// target needs and by what model, each check.
func Lines(sz *rundir.Sizing) []string {
	var out []string
	if sz.CeilingReqPerS > 0 {
		out = append(out, fmt.Sprintf("Ceiling: the pool serves at most **%s req/s** at a hold of %s per request (P/h).", format.Num(sz.CeilingReqPerS), format.Secs(sz.HoldSeconds)))
	}
	if sz.PoolNeeded > 0 {
		out = append(out, fmt.Sprintf("At %s req/s: R·h = %s connections busy on average; the pool needs **%d** (model: %s; at %d a request waits with probability %.1f%%, %s on average).",
			format.Num(sz.TargetReqPerS), format.Num(sz.OfferedConnections), sz.PoolNeeded, sz.Model, sz.PoolNeeded, 100*sz.WaitProbability, format.Secs(sz.MeanWaitSeconds)))
	}
	for _, c := range sz.Checks {
		word := "not judged without --replicas"
		if c.Fits != nil {
			word = "fits"
			if !*c.Fits {
				word = "**does NOT fit**"
			}
		}
		out = append(out, fmt.Sprintf("%s: %s — %s.", c.Resource, word, c.Detail))
	}
	if len(out) == 0 {
		out = append(out, "Nothing could be sized: see what was not measured below.")
	}
	for _, n := range sz.Notes {
		out = append(out, "Note: "+n+".")
	}
	return out
}

// InputValue is an input's value and unit as the tables show it; "—"
// when it was not measured.
func InputValue(in rundir.SizingInput) string {
	if in.Value == nil {
		return "—"
	}
	return format.Num(*in.Value) + " " + in.Unit
}

var sizingTemplate = template.Must(template.New("sizing").Parse(`<h2>{{.Title}}</h2>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
<table><thead><tr><th>input</th><th>value</th><th>source</th></tr></thead><tbody>
{{range .Inputs}}<tr><td>{{.Name}}</td><td>{{.Value}}</td><td>{{.Source}}</td></tr>
{{end}}</tbody></table>
{{if .Missing}}<p class="muted">Not measured or not given, so not used: {{.Missing}}.</p>{{end}}
`))

// SectionHTML is a sizing as an HTML section under title; "" for
// none.
func SectionHTML(sz *rundir.Sizing, title string) template.HTML {
	if sz == nil {
		return ""
	}
	type row struct{ Name, Value, Source string }
	v := struct {
		Title   string
		Lines   []template.HTML
		Inputs  []row
		Missing string
	}{Title: title, Missing: strings.Join(sz.Missing, "; ")}
	for _, l := range Lines(sz) {
		// The lines' only markup is Markdown bold; the rest is escaped.
		esc := template.HTMLEscapeString(l)
		for strings.Count(esc, "**") >= 2 {
			esc = strings.Replace(strings.Replace(esc, "**", "<strong>", 1), "**", "</strong>", 1)
		}
		v.Lines = append(v.Lines, template.HTML(esc))
	}
	for _, in := range sz.Inputs {
		v.Inputs = append(v.Inputs, row{in.Name, InputValue(in), in.Source})
	}
	var b strings.Builder
	_ = sizingTemplate.Execute(&b, v) // a strings.Builder does not fail
	return template.HTML(b.String())
}

// HoldChange says how the measured hold per request moved from the
// sizing before to the one after, each side named, and what that makes of
// the pool's ceiling: "hold fell from 1.9 s to 110 ms per request (…): the
// same pool of 10 now serves at most 91 req/s instead of 5.3". "" when
// either has no measured hold.
func HoldChange(beforeName, afterName string, b, a *rundir.Sizing) string {
	if b == nil || a == nil || b.HoldSeconds <= 0 || a.HoldSeconds <= 0 {
		return ""
	}
	verb := "fell"
	switch {
	case a.HoldSeconds > b.HoldSeconds:
		verb = "rose"
	case a.HoldSeconds == b.HoldSeconds:
		verb = "stayed"
	}
	line := fmt.Sprintf("hold %s from %s to %s per request (%s → %s, measured from the database)", verb, format.Secs(b.HoldSeconds), format.Secs(a.HoldSeconds), beforeName, afterName)
	if b.CeilingReqPerS <= 0 || a.CeilingReqPerS <= 0 {
		return line
	}
	pb, pa := PoolSize(b), PoolSize(a)
	if pb > 0 && pb == pa {
		return line + fmt.Sprintf(": the same pool of %s now serves at most %s req/s instead of %s", format.Num(pa), format.Num(a.CeilingReqPerS), format.Num(b.CeilingReqPerS))
	}
	return line + fmt.Sprintf(": the pool's ceiling went from %s to %s req/s", format.Num(b.CeilingReqPerS), format.Num(a.CeilingReqPerS))
}

// PoolSize is the sizing's pool size P; 0 when not measured.
func PoolSize(sz *rundir.Sizing) float64 {
	for _, in := range sz.Inputs {
		if in.Name == "pool size P" && in.Value != nil {
			return *in.Value
		}
	}
	return 0
}

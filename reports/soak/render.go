package soak

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Headline is the soak's verdict in a line.
func Headline(r *rundir.SoakResult) string {
	switch r.Verdict {
	case Growing:
		var names []string
		for _, x := range r.Resources {
			if x.Verdict == Growing {
				names = append(names, x.Name)
			}
		}
		return "FAIL — growing under constant load and not recovered in the cool-down: " + strings.Join(names, ", ")
	case NotJudged:
		return "NOT JUDGED — no resource could be judged (see why below); this is not a pass"
	}
	return "PASS — every resource judged is flat (or came back in the cool-down)"
}

// WriteMarkdown writes the soak's report section.
func WriteMarkdown(w io.Writer, r *rundir.SoakResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Soak: %s\n\n", Headline(r))
	fmt.Fprintf(&b, "Baseline %s, load %s (warm-up %s left out: steady window %s), cool-down %s.\n\n",
		r.LoadStart.Sub(r.BaselineStart).Round(1e8), r.LoadEnd.Sub(r.LoadStart).Round(1e8), r.Settings.Warmup,
		r.LoadEnd.Sub(r.SteadyStart).Round(1e8), r.CoolDownEnd.Sub(r.LoadEnd).Round(1e8))
	b.WriteString("| resource | verdict |\n|---|---|\n")
	for _, x := range r.Resources {
		fmt.Fprintf(&b, "| %s | %s |\n", md(x.Name), md(x.Line))
	}
	if l := r.Leakbench; l != nil {
		fmt.Fprintf(&b, "| %s (not judged as the service's) | %s |\n", md(l.Name), md(l.Line))
	}
	if len(r.Culprits) > 0 {
		b.WriteString("\nWhat accumulated (stuck sessions begun in the load, still open when it ended):\n\n")
		for i, c := range r.Culprits {
			if i == 5 {
				break
			}
			fmt.Fprintf(&b, "- %d × `%s` from `%s`, held up to %.1f s\n", c.Episodes, strings.ReplaceAll(c.ExampleQuery, "`", "'"), md(c.ApplicationName), c.MaxHoldSeconds)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes the soak's report section as an HTML fragment, its
// plot (plots/soak.png, relative to the report) below the table.
func WriteHTML(w io.Writer, r *rundir.SoakResult, plot string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<section id=\"soak\"><h2>Soak: %s</h2>\n<table><tr><th>resource</th><th>verdict</th></tr>\n", html.EscapeString(Headline(r)))
	row := func(name, line string) {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>\n", html.EscapeString(name), html.EscapeString(line))
	}
	for _, x := range r.Resources {
		row(x.Name, x.Line)
	}
	if l := r.Leakbench; l != nil {
		row(l.Name+" (not judged as the service's)", l.Line)
	}
	b.WriteString("</table>\n")
	if len(r.Culprits) > 0 {
		b.WriteString("<p>What accumulated (stuck sessions begun in the load, still open when it ended):</p><ul>\n")
		for i, c := range r.Culprits {
			if i == 5 {
				break
			}
			fmt.Fprintf(&b, "<li>%d × <code>%s</code> from <code>%s</code>, held up to %.1f s</li>\n", c.Episodes, html.EscapeString(c.ExampleQuery), html.EscapeString(c.ApplicationName), c.MaxHoldSeconds)
		}
		b.WriteString("</ul>\n")
	}
	if plot != "" {
		fmt.Fprintf(&b, "<img src=\"%s\" alt=\"soak: each resource's series and its fit\" style=\"max-width:100%%\">\n", html.EscapeString(plot))
	}
	b.WriteString("</section>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// md escapes what would break a Markdown table cell.
func md(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

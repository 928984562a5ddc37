package reports

import (
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/table"
)

// writeHTTPSteps writes the table of the run's http steps, if it had any.
func writeHTTPSteps(b *strings.Builder, s *rundir.Summary) {
	rows := table.HTTPSteps(s.Load)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## HTTP steps\n\n| " + strings.Join(table.HTTPHeader, " | ") + " |\n|---|---:|---:|---|---:|\n")
	for _, r := range rows {
		r[0] = "`" + mdEscape(r[0]) + "`"
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// htmlHTTPSteps are the run's http steps as HTML rows (Label: the step).
func htmlHTTPSteps(l *rundir.LoadResult) []htmlRow {
	var out []htmlRow
	for _, r := range table.HTTPSteps(l) {
		out = append(out, htmlRow{Label: r[0], Values: r[1:]})
	}
	return out
}

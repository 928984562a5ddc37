package reports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// httpStepHeader heads the table of a run's http steps.
var httpStepHeader = []string{"step", "requests", "failed", "statuses", "p95 / p99"}

// httpStepRows are a run's http steps (summary.json's load.http), one row
// each in httpStepHeader's columns, by step name; none without http steps.
func httpStepRows(l *rundir.LoadResult) [][]string {
	if l == nil || len(l.HTTP) == 0 {
		return nil
	}
	names := make([]string, 0, len(l.HTTP))
	for n := range l.HTTP {
		names = append(names, n)
	}
	slices.Sort(names)
	rows := make([][]string, 0, len(names))
	for _, n := range names {
		st := l.HTTP[n]
		codes := make([]string, 0, len(st.Statuses))
		for c := range st.Statuses {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		statuses := make([]string, len(codes))
		for i, c := range codes {
			statuses[i] = fmt.Sprintf("%s × %d", c, st.Statuses[c])
		}
		lat := "—"
		if st.Latency.Count > 0 {
			lat = millis(st.Latency.P95Ms) + " / " + millis(st.Latency.P99Ms)
		}
		rows = append(rows, []string{n, fmt.Sprint(st.Requests), fmt.Sprint(st.Failures), orDash(strings.Join(statuses, ", ")), lat})
	}
	return rows
}

// writeHTTPSteps writes the table of the run's http steps, if it had any.
func writeHTTPSteps(b *strings.Builder, s *Summary) {
	rows := httpStepRows(s.Load)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## HTTP steps\n\n| " + strings.Join(httpStepHeader, " | ") + " |\n|---|---:|---:|---|---:|\n")
	for _, r := range rows {
		r[0] = "`" + mdEscape(r[0]) + "`"
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// htmlHTTPSteps are the run's http steps as HTML rows (Label: the step).
func htmlHTTPSteps(l *rundir.LoadResult) []htmlRow {
	var out []htmlRow
	for _, r := range httpStepRows(l) {
		out = append(out, htmlRow{Label: r[0], Values: r[1:]})
	}
	return out
}

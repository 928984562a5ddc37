package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// HTTPHeader heads the table of a run's http steps.
var HTTPHeader = []string{"step", "requests", "failed", "statuses", "p95 / p99"}

// HTTPSteps are a run's http steps (summary.json's load.http), one row
// each in HTTPHeader's columns, by step name; none without http steps.
func HTTPSteps(l *rundir.LoadResult) [][]string {
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
		rows = append(rows, []string{n, fmt.Sprint(st.Requests), fmt.Sprint(st.Failures), format.OrDash(strings.Join(statuses, ", ")), lat})
	}
	return rows
}

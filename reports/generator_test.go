package reports

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestGeneratorRow: the key-figures table of the Markdown and the HTML
// report says whether the generator kept up, or that it was saturated and
// what that means for the latency rows; a run recorded before the check
// existed says "not recorded", and no figure.
func TestGeneratorRow(t *testing.T) {
	kept := &rundir.Generator{EngineCPUs: 2, EngineCoresMean: 0.2, Lateness: rundir.LatencyStats{Count: 40, P99Ms: 3}}
	kept.Judge(0, 0)
	sat := &rundir.Generator{EngineCPUs: 1, EngineCoresMean: 1, Lateness: rundir.LatencyStats{Count: 40, P99Ms: 840}}
	sat.Judge(0, 0)
	for _, tc := range []struct {
		g    *rundir.Generator
		want string
	}{
		{kept, "kept up: schedule late by p99 3.0 ms, 0.2 cores"},
		{sat, "saturated: schedule late by p99 840 ms — latency figures include leakbench's own delay"},
		{nil, "not recorded"},
	} {
		s := &rundir.Summary{Load: &rundir.LoadResult{Requests: 10, Generator: tc.g}}
		var md, h bytes.Buffer
		if err := WriteSummaryMarkdown(&md, s); err != nil {
			t.Fatal(err)
		}
		if row := "| Generator | " + tc.want + " |"; !strings.Contains(md.String(), row) {
			t.Errorf("Markdown lacks %q:\n%s", row, md.String())
		}
		if err := (&Run{Dir: t.TempDir(), Summary: s}).WriteHTML(&h); err != nil {
			t.Fatal(err)
		}
		// The row's label and its value, in the table's cells.
		text := html.UnescapeString(h.String())
		if i := strings.Index(text, ">Generator<"); i < 0 || !strings.Contains(text[i:min(len(text), i+400)], ">"+tc.want+"<") {
			t.Errorf("HTML lacks the Generator row %q", tc.want)
		}
	}
}

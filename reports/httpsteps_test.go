package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestHTTPStepsInReports: a run with http steps shows each one — requests,
// failures, answers by status, p95/p99 — in report.md and report.html; a
// run without shows no such section.
func TestHTTPStepsInReports(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sum := func(http map[string]rundir.HTTPStats) *rundir.Summary {
		return &rundir.Summary{Name: "run", Started: t0, Ended: t0.Add(10 * time.Second), EndReason: rundir.EndCompleted,
			Environment: rundir.Environment{Provider: "external", Target: "http://127.0.0.1:1/mcp"},
			Load:        &rundir.LoadResult{Requests: 12, HTTP: http}}
	}
	with := sum(map[string]rundir.HTTPStats{
		"POST /api/jobs":  {Requests: 4, Statuses: map[string]int64{"201": 4}, Latency: rundir.LatencyStats{Count: 4, P95Ms: 12.5, P99Ms: 30}},
		"GET /api/broken": {Requests: 2, Failures: 2, Statuses: map[string]int64{"503": 2}, Latency: rundir.LatencyStats{Count: 2, P95Ms: 1, P99Ms: 1}},
	})
	var md bytes.Buffer
	if err := WriteSummaryMarkdown(&md, with); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## HTTP steps", "| `GET /api/broken` | 2 | 2 | 503 × 2 |", "| `POST /api/jobs` | 4 | 0 | 201 × 4 | 12.5 ms / 30.0 ms |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	var html bytes.Buffer
	if err := (&Run{Summary: with}).WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h3>HTTP steps: ", "<code>POST /api/jobs</code>", "201 × 4"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	md.Reset()
	html.Reset()
	if err := WriteSummaryMarkdown(&md, sum(nil)); err != nil {
		t.Fatal(err)
	}
	if err := (&Run{Summary: sum(nil)}).WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "HTTP steps") || strings.Contains(html.String(), "HTTP steps") {
		t.Error("a run without http steps has an HTTP steps section")
	}
}

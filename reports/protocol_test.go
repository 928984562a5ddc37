package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestProtocolInReports: report.md, report.html and a sign-off's tables
// say which protocol version the users spoke, and with which setting; a
// run recorded before load.protocol existed has no such row.
func TestProtocolInReports(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sum := func(variant string, protocol map[string]int64) *rundir.Summary {
		return &rundir.Summary{Name: variant, Started: t0, Ended: t0.Add(10 * time.Second), EndReason: rundir.EndCompleted,
			Environment: rundir.Environment{Variant: variant, Provider: "local"},
			Load:        &rundir.LoadResult{Requests: 12, Protocol: protocol, Plan: autoPlan(t)}}
	}
	modern := sum("commit-in-finally", map[string]int64{"2026-07-28": 60})
	mixed := sum("fixed", map[string]int64{"2025-11-25": 20, "2026-07-28": 40})
	const row = "| MCP protocol spoken (users) | 2026-07-28 × 60 (protocolVersion auto) |"
	var md bytes.Buffer
	if err := WriteSummaryMarkdown(&md, modern); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), row) {
		t.Errorf("report.md lacks %q:\n%s", row, md.String())
	}
	var html bytes.Buffer
	if err := (&Run{Summary: mixed}).WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if want := "<th>MCP protocol spoken (users)</th><td>2026-07-28 × 40, 2025-11-25 × 20 (protocolVersion auto)</td>"; !strings.Contains(html.String(), want) {
		t.Errorf("report.html lacks %q", want)
	}
	c := &Comparison{Before: modern, After: sum("fixed", nil)}
	md.Reset()
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "| MCP protocol spoken (users) | 2026-07-28 × 60 (protocolVersion auto) | n/a |"; !strings.Contains(md.String(), want) {
		t.Errorf("compare report.md lacks %q:\n%s", want, md.String())
	}
	md.Reset()
	html.Reset()
	old := sum("fixed", nil)
	if err := WriteSummaryMarkdown(&md, old); err != nil {
		t.Fatal(err)
	}
	if err := (&Run{Summary: old}).WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "MCP protocol") || strings.Contains(html.String(), "MCP protocol") {
		t.Error("a run without load.protocol shows a protocol row")
	}
}

// TestFeaturesInReports: a run whose users used the 2026-07-28 features
// has a row summing them up in report.md and in a comparison; a run
// without them has none.
func TestFeaturesInReports(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	sum := func(f *rundir.FeatureStats) *rundir.Summary {
		return &rundir.Summary{Name: "r", Started: t0, Ended: t0.Add(10 * time.Second), EndReason: rundir.EndCompleted,
			Load: &rundir.LoadResult{Requests: 12, Features: f}}
	}
	used := sum(&rundir.FeatureStats{CacheHits: map[string]int64{"tools/list": 7, "resources/read": 3}, InputRoundTrips: 4,
		Tasks:  &rundir.TaskStats{Created: 5, Completed: 3, Failed: 1, GivenUp: 1},
		Listen: &rundir.ListenStats{Streams: 2, Unsupported: 1, Events: map[string]int64{"notifications/tools/list_changed": 6}}})
	var md bytes.Buffer
	if err := WriteSummaryMarkdown(&md, used); err != nil {
		t.Fatal(err)
	}
	const row = "| 2026-07-28 features | 10 cache hits; 4 input round trips; 5 tasks (3 completed, 1 failed, 0 cancelled, 1 given up); 2 streams, 6 notifications, 1 users without one |"
	if !strings.Contains(md.String(), row) {
		t.Errorf("report.md lacks %q:\n%s", row, md.String())
	}
	md.Reset()
	if err := (&Comparison{Before: used, After: sum(nil)}).WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| none |") {
		t.Errorf("the comparison does not say the after run used none:\n%s", md.String())
	}
	md.Reset()
	if err := WriteSummaryMarkdown(&md, sum(nil)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "2026-07-28 features") {
		t.Error("a run without features shows the row")
	}
}

// autoPlan is a recorded plan under protocolVersion auto.
func autoPlan(t *testing.T) json.RawMessage {
	t.Helper()
	p, err := scenariofile.Parse([]byte("protocolVersion: auto\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [tools/list]}\n"), "auto.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

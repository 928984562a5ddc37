package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
)

// syntheticRun is synthetic.Run as LoadRun would have read it: the pool
// and the forensics derived.
func syntheticRun(seed uint64, leaky bool) *Run {
	p := synthetic.Run(seed, leaky)
	r := &Run{Dir: p.Summary.Name, Summary: p.Summary, Samples: p.Samples, Episodes: p.Episodes, Load: p.Load}
	deriveRun(r)
	return r
}

// TestMultiSignoff: the combined report of several sign-offs passes only
// when every one does, names the ones that did not, and writes one section
// (Markdown, HTML) or suite (JUnit) per pattern.
func TestMultiSignoff(t *testing.T) {
	t.Setenv(StepSummaryEnv, "")
	passing := CompareRuns(syntheticRun(1, true), syntheticRun(2, false))
	leakyAfter := CompareRuns(syntheticRun(3, true), syntheticRun(4, true))
	if !passing.Pass || leakyAfter.Pass {
		t.Fatalf("synthetic comparisons: want pass and fail, got %v and %v", passing.Pass, leakyAfter.Pass)
	}
	all := NewMultiSignoff([]PatternSignoff{
		{Name: "ci", Pattern: "commit-in-finally", VariantBefore: "commit-in-finally", VariantAfter: "fixed", Dir: "ci", DurationSeconds: 80, Comparison: passing},
		{Name: "outside", Pattern: "session-outside-request", VariantBefore: "session-outside-request", VariantAfter: "fixed", Dir: "outside", DurationSeconds: 61, Comparison: leakyAfter},
		{Name: "upstream", Pattern: "held-across-upstream", VariantBefore: "held-across-upstream", VariantAfter: "fixed", Dir: "upstream", Error: "before run (held-across-upstream): start gateway: boom"},
	})
	if all.Pass || strings.Join(all.Failed, ",") != "outside,upstream" {
		t.Errorf("verdict: pass %v, failed %v; want a failure naming outside and upstream", all.Pass, all.Failed)
	}
	if one := NewMultiSignoff(all.Patterns[:1]); !one.Pass || len(one.Failed) != 0 {
		t.Errorf("every pattern passed, but the verdict is %v (failed %v)", one.Pass, one.Failed)
	}
	if NewMultiSignoff(nil).Pass {
		t.Errorf("no pattern signed off is not a pass")
	}

	dir := t.TempDir()
	if err := RenderMultiSignoff(dir, all); err != nil {
		t.Fatal(err)
	}
	var back MultiSignoff
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, rundir.CompareFile)), &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != MultiKind || back.Pass || len(back.Patterns) != 3 || back.Patterns[0].Comparison == nil ||
		back.Patterns[0].Comparison.Before.Probe.StuckEpisodes != passing.Before.Probe.StuckEpisodes || back.Patterns[2].Error == "" {
		t.Errorf("compare.json round trip: %+v", back)
	}

	md := string(readFile(t, filepath.Join(dir, rundir.ReportFile)))
	for _, want := range []string{"FAIL — 2 patterns: see outside, upstream", "| `commit-in-finally` | [ci](#ci) | PASS |",
		"## ci\n", "## outside\n", "## upstream\n", "could not be done: before run (held-across-upstream): start gateway: boom",
		"(ci/report.md)", "after leaks no session", "Stuck episodes"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}

	// JUnit: every failed check of every pattern, and the pattern that
	// could not be done, are failures.
	failures := 1
	for _, c := range []*Comparison{passing, leakyAfter} {
		for _, ch := range c.Checks {
			if !ch.Pass {
				failures++
			}
		}
	}
	junit := readFile(t, filepath.Join(dir, rundir.JUnitFile))
	checkJUnit(t, junit, failures)
	for _, want := range []string{`classname="leakbench.signoff.ci"`, `classname="leakbench.signoff.outside"`, `name="sign-off could be done"`} {
		if !bytes.Contains(junit, []byte(want)) {
			t.Errorf("junit.xml lacks %s", want)
		}
	}

	page := string(readFile(t, filepath.Join(dir, rundir.HTMLFile)))
	for _, want := range []string{`id="ci"`, `id="outside"`, `href="ci/report.html"`, "<svg", "FAIL — 2 patterns", "start gateway: boom"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=\"http", "<link"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html is not self-contained: it has %q", bad)
		}
	}

	var table bytes.Buffer
	if err := all.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if s := table.String(); !strings.Contains(s, "== ci: commit-in-finally against fixed — PASS (1m20s)") || !strings.HasSuffix(s, "FAIL — 2 patterns: see outside, upstream\n") {
		t.Errorf("table:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.PlotsDir)); err == nil {
		t.Errorf("the combined report wrote plots of its own; they belong to each pattern's directory")
	}
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

func TestBisectExit(t *testing.T) {
	tests := []struct {
		name   string
		bisect bool
		err    error
		code   int
	}{
		{"good", true, nil, 0},
		{"bad", true, fmt.Errorf("%w: see report", errVerdict), bisectBad},
		{"could not run", true, errors.New("start postgres: boom"), bisectSkip},
		{"bad usage stops the bisect", true, fmt.Errorf("%w: unknown variant", errUsage), bisectAbort},
		{"interrupted stops the bisect", true, fmt.Errorf("after: %w", runner.ErrInterrupted), exitInterrupted},
		{"help", true, flag.ErrHelp, exitOK},
		{"without --bisect a verdict is 99", false, fmt.Errorf("%w: x", errVerdict), exitVerdict},
		{"without --bisect usage is 2", false, fmt.Errorf("%w: x", errUsage), exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(bisectExit(tt.bisect, tt.err)); got != tt.code {
				t.Errorf("exit code %d, want %d", got, tt.code)
			}
		})
	}
}

// copySignoff lays out a recorded sign-off (reports' fixture) as signoff
// writes it: out/before, out/after.
func copySignoff(t *testing.T) (string, *reports.Comparison) {
	t.Helper()
	out := t.TempDir()
	for _, run := range []string{"before", "after"} {
		if err := os.CopyFS(filepath.Join(out, run), os.DirFS(filepath.Join("..", "..", "reports", "testdata", "signoff", run))); err != nil {
			t.Fatal(err)
		}
	}
	b, err := reports.ReadRun(filepath.Join(out, "before"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := reports.ReadRun(filepath.Join(out, "after"))
	if err != nil {
		t.Fatal(err)
	}
	return out, reports.Compare(b, a, "before", "after")
}

// A sign-off against a baseline whose figures were better regresses, says
// which figure, writes the baseline reports and records a failed entry; a
// first sign-off with "last" and no history passes with a warning.
func TestRecordSignoffAgainstBaseline(t *testing.T) {
	ctx := context.Background()
	hdir := filepath.Join(t.TempDir(), "hist")
	out, cmp := copySignoff(t)
	t.Setenv(reports.StepSummaryEnv, filepath.Join(t.TempDir(), "step-summary.md"))

	first := &historyFlags{c: testCLI(), dir: hdir, release: "v1", baseline: "last", rules: history.DefaultRules()}
	if err := first.prepare("ci", "fixed"); err != nil {
		t.Fatal(err)
	}
	if first.base != nil {
		t.Fatal("a baseline in an empty history")
	}
	regressed, err := first.recordSignoff(ctx, out, cmp)
	if err != nil || regressed {
		t.Fatalf("first sign-off: regressed %v, %v", regressed, err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "baseline.md"))
	if !strings.Contains(string(md), "No baseline") {
		t.Errorf("baseline.md of a first run:\n%s", md)
	}

	// Make the accepted entry better than the fixture on two figures.
	st, _ := history.Open(hdir)
	entries, _, _ := st.List()
	if len(entries) != 1 || entries[0].Pass != cmp.Pass || entries[0].Release != "v1" {
		t.Fatalf("entries: %+v", entries)
	}
	firstID := entries[0].ID
	better := entries[0]
	better.Pass = true
	better.Figures.ReleaseP99Seconds = 0.2
	better.Figures.RequestRate = 300
	if _, err := st.Append(better); err != nil {
		t.Fatal(err)
	}

	second := &historyFlags{c: testCLI(), dir: hdir, release: "v2", baseline: "last", rules: history.DefaultRules()}
	if err := second.prepare("ci", "fixed"); err != nil {
		t.Fatal(err)
	}
	if second.base == nil || second.base.ID == firstID || second.base.Release != "v1" {
		t.Fatalf("baseline: want the newer, better entry, got %v", second.base != nil && second.base.ID == firstID)
	}
	regressed, err = second.recordSignoff(ctx, out, cmp)
	if err != nil || !regressed {
		t.Fatalf("second sign-off: regressed %v, %v", regressed, err)
	}
	md, _ = os.ReadFile(filepath.Join(out, "baseline.md"))
	for _, want := range []string{"**REGRESSED**", "| Connection release p99 | 200 ms | 1.08 s | +884 ms (×5.42) | REGRESSED |", "| Request rate | 300.0/s | 148.1/s |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("baseline.md lacks %q:\n%s", want, md)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(out, "baseline-junit.xml"))
	if !strings.Contains(string(junit), `failures="2"`) {
		t.Errorf("baseline-junit.xml:\n%s", junit)
	}
	summary, _ := os.ReadFile(os.Getenv(reports.StepSummaryEnv))
	if strings.Count(string(summary), "## Against the baseline") != 2 {
		t.Errorf("step summary:\n%s", summary)
	}
	entries, _, _ = st.List()
	last := entries[len(entries)-1]
	if last.Pass || last.Baseline == nil || !last.Baseline.Regressed || last.Release != "v2" {
		t.Errorf("regressed entry: pass %v baseline %+v", last.Pass, last.Baseline)
	}

	// An ID that is not there is bad usage, found before anything runs.
	missing := &historyFlags{c: testCLI(), dir: hdir, baseline: "20200101T", rules: history.DefaultRules()}
	if err := missing.prepare("ci", "fixed"); !errors.Is(err, errUsage) {
		t.Errorf("missing baseline: %v", err)
	}
	noHistory := &historyFlags{c: testCLI(), baseline: "last"}
	if err := noHistory.prepare("ci", "fixed"); !errors.Is(err, errUsage) {
		t.Errorf("--baseline without --history: %v", err)
	}
}

// TestRunVerdictExits: a run whose report says FAIL exits 99 (errVerdict)
// whether or not it bisects, as k6 does for thresholds, so that a CI step
// running leakbench against its service fails; a shard's slice is not
// judged; a passing run exits 0.
func TestRunVerdictExits(t *testing.T) {
	failing := &reports.Run{Summary: &rundir.Summary{EndReason: rundir.EndCompleted,
		Probe: &rundir.ProbeSummary{StuckEpisodes: 3, TimeoutTerminated: 3, Samples: 10}}}
	passing := &reports.Run{Summary: &rundir.Summary{EndReason: rundir.EndCompleted, Probe: &rundir.ProbeSummary{Samples: 10}}}
	h := &historyFlags{c: testCLI()}
	if err := h.recordRun(context.Background(), t.TempDir(), failing, true); !errors.Is(err, errVerdict) {
		t.Errorf("a failing run: %v, want errVerdict (exit 99)", err)
	}
	if err := h.recordRun(context.Background(), t.TempDir(), failing, false); err != nil {
		t.Errorf("a shard's failing slice: %v, want no verdict", err)
	}
	if err := h.recordRun(context.Background(), t.TempDir(), passing, true); err != nil {
		t.Errorf("a passing run: %v", err)
	}
}

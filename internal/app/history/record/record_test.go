package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/reports"
)

// copySignoff lays out a recorded sign-off (reports' fixture) as signoff
// writes it: out/before, out/after.
func copySignoff(t *testing.T) (string, *reports.Comparison) {
	t.Helper()
	out := t.TempDir()
	for _, run := range []string{"before", "after"} {
		if err := os.CopyFS(filepath.Join(out, run), os.DirFS(filepath.Join("..", "..", "..", "..", "reports", "testdata", "signoff", run))); err != nil {
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

	first := &Recorder{Out: os.Stdout, Tables: os.Stdout, Warn: os.Stderr, Dir: hdir, Release: "v1", Baseline: "last", Rules: history.DefaultRules()}
	if err := first.Prepare("ci", "fixed"); err != nil {
		t.Fatal(err)
	}
	if first.Base != nil {
		t.Fatal("a baseline in an empty history")
	}
	regressed, err := first.Signoff(ctx, out, cmp)
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

	second := &Recorder{Out: os.Stdout, Tables: os.Stdout, Warn: os.Stderr, Dir: hdir, Release: "v2", Baseline: "last", Rules: history.DefaultRules()}
	if err := second.Prepare("ci", "fixed"); err != nil {
		t.Fatal(err)
	}
	if second.Base == nil || second.Base.ID == firstID || second.Base.Release != "v1" {
		t.Fatalf("baseline: want the newer, better entry, got %v", second.Base != nil && second.Base.ID == firstID)
	}
	regressed, err = second.Signoff(ctx, out, cmp)
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
	missing := &Recorder{Out: os.Stdout, Tables: os.Stdout, Warn: os.Stderr, Dir: hdir, Baseline: "20200101T", Rules: history.DefaultRules()}
	if err := missing.Prepare("ci", "fixed"); !errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("missing baseline: %v", err)
	}
	noHistory := &Recorder{Out: os.Stdout, Tables: os.Stdout, Warn: os.Stderr, Baseline: "last"}
	if err := noHistory.Prepare("ci", "fixed"); !errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("--baseline without --history: %v", err)
	}
}

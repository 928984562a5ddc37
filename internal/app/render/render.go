// Package render is the application's door to the reports library: it
// renders a run directory's reports (leakbench report, and run and merge
// once their directory is written), judges two run directories under one
// of the two named questions (leakbench compare --mode fix|regression,
// mode.go), judges a run against a stored baseline run or history
// (run --baseline, baseline.go), gives the verdict a run's report gives as
// the history records it, and writes a sign-off's baseline reports.
//
//	run, err := render.Report("out/run")    // report.md, report.html, junit.xml, plots/
//	pass, checks := render.Verdict(run)      // every leak check and threshold
//	cmp, err := render.CompareMode("out/cmp", "out/before", "out/after", render.CompareOptions{Mode: verdict.ModeRegression})
//	if err == nil && !cmp.Pass { ... exit 99 ... }
//
//	sc, _ := render.ScenarioOfPlan(profile.Name, profile.Plan)
//	base, err := render.OpenBaseline("main-run", sc, false) // before the load: ErrBaseline is usage
//	cmp, info, err := render.JudgeBaseline("out/run", base, render.BaselineOptions{})
package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
)

// Report renders dir's reports from what the run recorded: summary.json,
// report.md, report.html, junit.xml and plots/. A run killed before it
// finished renders with an "incomplete" banner.
func Report(dir string) (*reports.Run, error) { return reports.RenderRun(dir) }

// Compare judges two run directories in fix mode — before must show the
// leak, after none — and writes the comparison's reports into out
// (CompareMode asks either question).
func Compare(out, beforeDir, afterDir string) (*reports.Comparison, error) {
	before, err := reports.LoadRun(beforeDir)
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	after, err := reports.LoadRun(afterDir)
	if err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	cmp := reports.CompareRuns(before, after)
	if err := reports.RenderComparison(out, cmp); err != nil {
		return nil, err
	}
	return cmp, nil
}

// WriteSummary writes a run's summary as Markdown, as run and merge print
// it.
func WriteSummary(w io.Writer, s *rundir.Summary) error { return reports.WriteSummaryMarkdown(w, s) }

// Verdict is a run's verdict as its report and junit.xml give it: every
// leak check and every threshold passed. The checks are as the history
// records them, details redacted.
func Verdict(r *reports.Run) (bool, []history.Check) {
	pass := true
	var checks []history.Check
	for _, c := range verdict.Checks(r.Summary) {
		pass = pass && c.Pass
		checks = append(checks, history.Check{Name: c.Name, Pass: c.Pass, Detail: redact.String(c.Detail)})
	}
	for _, t := range r.Thresholds {
		pass = pass && t.Pass
		checks = append(checks, history.Check{Name: "threshold " + t.Metric + " " + t.Expression, Pass: t.Pass, Detail: "observed " + t.ObservedString()})
	}
	return pass, checks
}

// FailedThresholds names the load's thresholds that failed ("threshold
// METRIC EXPRESSION"), none when the summary has no load.
func FailedThresholds(s *rundir.Summary) []string {
	if s == nil || s.Load == nil {
		return nil
	}
	var failed []string
	for _, t := range s.Load.Thresholds {
		if !t.Pass {
			failed = append(failed, "threshold "+t.Metric+" "+t.Expression)
		}
	}
	return failed
}

// Baseline writes baseline.md, baseline.json and baseline-junit.xml beside
// the sign-off's report in out, and appends baseline.md to
// $GITHUB_STEP_SUMMARY when it is set.
func Baseline(out string, b *history.BaselineInfo) error {
	var md, junit bytes.Buffer
	if err := b.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := b.WriteJUnit(&junit); err != nil {
		return err
	}
	js, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{rundir.BaselineReportFile: md.Bytes(), rundir.BaselineSummaryFile: append(js, '\n'), rundir.BaselineJUnitFile: junit.Bytes()} {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if path := os.Getenv(reports.StepSummaryEnv); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("write $%s: %w", reports.StepSummaryEnv, err)
		}
		_, werr := f.Write(append(md.Bytes(), '\n'))
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("write $%s: %w", reports.StepSummaryEnv, err)
		}
	}
	return nil
}

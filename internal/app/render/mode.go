package render

import (
	"fmt"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
)

// CompareOptions configure CompareMode.
type CompareOptions struct {
	// Mode is the question; required (ErrMode when empty).
	Mode verdict.Mode
	// Rules are the regression mode's noise rules, as --regression-rule
	// sets them; nil: history.DefaultRules(). Unused in fix mode.
	Rules []history.Rule
}

// CompareMode judges two run directories under o.Mode and writes the
// comparison's reports into out (compare.json, report.md, report.html,
// junit.xml, plots/). cmp.Pass false is the verdict failing (exit 99);
// an error means nothing was judged (ErrMode: usage).
func CompareMode(out, beforeDir, afterDir string, o CompareOptions) (*reports.Comparison, error) {
	if _, err := verdict.ParseMode(string(o.Mode)); err != nil {
		return nil, err
	}
	before, err := reports.LoadRun(beforeDir)
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	after, err := reports.LoadRun(afterDir)
	if err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	cmp, err := JudgeRuns(before, after, o.Mode, o.Rules)
	if err != nil {
		return nil, err
	}
	if err := reports.RenderComparison(out, cmp); err != nil {
		return nil, err
	}
	return cmp, nil
}

// JudgeRuns judges two runs already read under mode, without writing
// anything (reports.RenderComparison writes it). rules nil: the defaults.
func JudgeRuns(before, after *reports.Run, mode verdict.Mode, rules []history.Rule) (*reports.Comparison, error) {
	var deltas []verdict.Delta
	if mode == verdict.ModeRegression {
		deltas = Deltas(before.Summary, after.Summary, rules)
	}
	return reports.CompareRunsMode(before, after, mode, deltas)
}

// Deltas are the key figures of two runs, before against after, under the
// noise rules (nil: history.DefaultRules()) — the same rules and figures
// as a sign-off's --baseline (internal/app/history/FORMAT.md).
func Deltas(before, after *rundir.Summary, rules []history.Rule) []verdict.Delta {
	if rules == nil {
		rules = history.DefaultRules()
	}
	hd := history.CompareFigures(history.FiguresOfSummary(before), history.FiguresOfSummary(after), rules)
	out := make([]verdict.Delta, 0, len(hd))
	for _, d := range hd {
		out = append(out, verdict.Delta{Figure: d.Figure, Label: d.Label, Unit: d.Unit, Before: d.Baseline, After: d.Current,
			Change: d.Change, Ratio: d.Ratio, Regressed: d.Regressed, Skipped: d.Skipped, Rule: d.Rule,
			BeforeText: d.BaselineText(), AfterText: d.CurrentText(), ChangeText: d.ChangeText()})
	}
	return out
}

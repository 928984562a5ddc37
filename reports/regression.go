package reports

import (
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/verdict"
)

// CompareRunsMode judges two run directories read with LoadRun under the
// mode's question. verdict.ModeFix is CompareRuns. verdict.ModeRegression is
// CompareRegression with the deltas the caller computed from its noise
// rules (the application layer holds the rules: internal/app/render).
func CompareRunsMode(before, after *Run, mode verdict.Mode, deltas []verdict.Delta) (*Comparison, error) {
	switch mode {
	case verdict.ModeFix:
		return CompareRuns(before, after), nil
	case verdict.ModeRegression:
		return CompareRegression(before, after, deltas), nil
	}
	_, err := verdict.ParseMode(string(mode))
	return nil, err
}

// CompareRegression judges whether after is no worse than before
// (verdict.Regression): two healthy runs pass; a leaky after of a healthy
// before fails, each check naming what regressed.
func CompareRegression(before, after *Run, deltas []verdict.Delta) *Comparison {
	b, a := before.Summary, after.Summary
	c := &Comparison{SchemaVersion: rundir.SchemaVersion, Mode: verdict.ModeRegression, Question: verdict.ModeRegression.Question(),
		Before: b, After: a, BeforeDir: before.Dir, AfterDir: after.Dir, Deltas: deltas, before: before, after: after}
	c.Checks = verdict.Regression(b, a, before.Thresholds, after.Thresholds, deltas)
	c.Pass = verdict.Passed(c.Checks)
	return c
}

// headline is the comparison's verdict line, naming the question asked.
func (c *Comparison) headline() string {
	mode := c.Mode
	if mode == "" {
		mode = verdict.ModeFix
	}
	facts := verdict.Facts(c.Before, "before") + "; " + verdict.Facts(c.After, "after")
	if mode == verdict.ModeRegression {
		if c.Pass {
			return "regression check: PASS — after is no worse than before — " + facts
		}
		return "regression check: FAIL — after regressed: " + strings.Join(c.Regressions(), "; ")
	}
	if c.Pass {
		return "sign-off (fix): PASS — " + facts
	}
	return "sign-off (fix): FAIL — " + facts + ": see the checks below"
}

// Regressions say in a few words each what regressed, in the checks'
// order: "sessions held (none before)", "Connection release p99 12 ms →
// 1.50 s". Empty when nothing did.
func (c *Comparison) Regressions() []string { return verdict.Regressions(c.Checks, c.Deltas) }

// FailedChecks names the checks that failed, in order.
func (c *Comparison) FailedChecks() []string {
	var out []string
	for _, ch := range c.Checks {
		if !ch.Pass {
			out = append(out, ch.Name)
		}
	}
	return out
}

// question is the comparison's question in words; a compare.json of
// before the modes asked the fix question.
func (c *Comparison) question() string {
	if c.Question != "" {
		return c.Question
	}
	return verdict.ModeFix.Question()
}

// DecodeSummary decodes a summary.json read from dir (or kept elsewhere,
// as a history entry keeps it), checking its schema version.
func DecodeSummary(dir string, raw []byte) (*rundir.Summary, error) { return decodeSummary(dir, raw) }

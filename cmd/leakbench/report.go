package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/verdict"
)

func cmdReport(_ context.Context, c *cli, args []string) error {
	fs := c.flagSet("report")
	sizeFlags := addSizingFlags(fs) // sizing.go
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench report RUN_DIR\n\nRenders RUN_DIR's report from what the run recorded: summary.json, report.md, report.html,\njunit.xml and plots/*.png|svg. A run killed before it finished renders with an \"incomplete\"\nbanner. With $GITHUB_STEP_SUMMARY set, report.md is appended to it. --target-rate and --replicas\nsize its pool again for another rate or number of instances (the Sizing section).\n")
		printFlags(fs.Output(), fs)
	}
	pos, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want exactly one RUN_DIR", cliflag.ErrUsage)
	}
	sizeOpts, sizeGiven, err := sizeFlags.options()
	if err != nil {
		return err
	}
	dir := pos[0]
	if sizeGiven {
		if err := sizeRun(c.stderr, dir, sizeOpts); err != nil {
			return err
		}
	}
	run, err := render.Report(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "wrote %s (and %s, %s, %s, %s/)\n", filepath.Join(dir, rundir.HTMLFile),
		rundir.ReportFile, rundir.SummaryFile, rundir.JUnitFile, rundir.PlotsDir)
	return run.WriteMarkdown(c.stdout)
}

func cmdCompare(_ context.Context, c *cli, args []string) error {
	fs := c.flagSet("compare")
	out := fs.String("out", "", "directory for compare.json, report.md, report.html, junit.xml and plots/ (required)")
	mode := fs.String("mode", "", "the question asked (required): fix (before must show the leak, after must not) or regression (after must be no worse than before)")
	rules := history.DefaultRules()
	fs.Func("regression-rule", "with --mode regression: override a noise rule, `FIGURE=RATIO:FLOOR` (repeatable), e.g. release_p99_seconds=2:0.2; rules: internal/app/history/FORMAT.md", func(s string) error {
		return history.SetRule(rules, s)
	})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench compare --mode fix|regression BEFORE_DIR AFTER_DIR --out DIR\n\nJudges two run directories under the question --mode names:\n  fix         does the fix make the leak go away: BEFORE must show the leak, AFTER must not\n  regression  is AFTER no worse than BEFORE: no new leaked or held session or pinned pool,\n              and the key figures within their noise rules (two healthy runs pass)\nExit 99 when the verdict fails.\n\n")
		printFlags(fs.Output(), fs)
	}
	pos, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || *out == "" {
		return fmt.Errorf("%w: want --mode fix|regression BEFORE_DIR AFTER_DIR --out DIR", cliflag.ErrUsage)
	}
	m, err := verdict.ParseMode(*mode)
	if err != nil {
		return fmt.Errorf("%w: --mode: %w", cliflag.ErrUsage, err)
	}
	cmp, err := render.CompareMode(*out, pos[0], pos[1], render.CompareOptions{Mode: m, Rules: rules})
	if err != nil {
		return err
	}
	if err := cmp.WriteTable(c.tables()); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nreport: %s\n", filepath.Join(*out, rundir.HTMLFile))
	if !cmp.Pass {
		return fmt.Errorf("%w: see %s", errVerdict, filepath.Join(*out, rundir.ReportFile))
	}
	return nil
}

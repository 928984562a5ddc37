package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func cmdReport(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench report RUN_DIR\n\nRenders RUN_DIR's report from what the run recorded: summary.json, report.md, report.html,\njunit.xml and plots/*.png|svg. A run killed before it finished renders with an \"incomplete\"\nbanner. With $GITHUB_STEP_SUMMARY set, report.md is appended to it.\n")
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want exactly one RUN_DIR", errUsage)
	}
	dir := pos[0]
	run, err := render.Report(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (and %s, %s, %s, %s/)\n", filepath.Join(dir, rundir.HTMLFile),
		rundir.ReportFile, rundir.SummaryFile, rundir.JUnitFile, rundir.PlotsDir)
	return run.WriteMarkdown(os.Stdout)
}

func cmdCompare(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "", "directory for compare.json, report.md, report.html, junit.xml and plots/ (required)")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench compare BEFORE_DIR AFTER_DIR --out DIR\n\nJudges two run directories: BEFORE must show the leak, AFTER must show none. Exit 99 when not.\n\n")
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || *out == "" {
		return fmt.Errorf("%w: want BEFORE_DIR AFTER_DIR --out DIR", errUsage)
	}
	cmp, err := render.Compare(*out, pos[0], pos[1])
	if err != nil {
		return err
	}
	if err := cmp.WriteTable(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s\n", filepath.Join(*out, rundir.HTMLFile))
	if !cmp.Pass {
		return fmt.Errorf("%w: see %s", errVerdict, filepath.Join(*out, rundir.ReportFile))
	}
	return nil
}

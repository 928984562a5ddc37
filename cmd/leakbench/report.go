package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/reports"
)

func cmdReport(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench report RUN_DIR\n\nRe-renders RUN_DIR/report.md from RUN_DIR/summary.json and prints it.\n")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want exactly one RUN_DIR", errUsage)
	}
	dir := fs.Arg(0)
	sum, err := reports.ReadRun(dir)
	if err != nil {
		return err
	}
	if err := reports.WriteRun(dir, sum); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", filepath.Join(dir, reports.ReportFile))
	return sum.WriteMarkdown(os.Stdout)
}

func cmdCompare(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "", "directory for compare.json and report.md (required)")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench compare BEFORE_DIR AFTER_DIR --out DIR\n\nJudges two run directories: BEFORE must show the leak, AFTER must show none. Exit 99 when not.\n\n")
		fs.PrintDefaults()
	}
	// Accept flags after the positional arguments too.
	var pos []string
	rest := args
	for len(rest) > 0 {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
	}
	if len(pos) != 2 || *out == "" {
		return fmt.Errorf("%w: want BEFORE_DIR AFTER_DIR --out DIR", errUsage)
	}
	before, err := reports.ReadRun(pos[0])
	if err != nil {
		return err
	}
	after, err := reports.ReadRun(pos[1])
	if err != nil {
		return err
	}
	cmp := reports.Compare(before, after, pos[0], pos[1])
	if err := cmp.Write(*out); err != nil {
		return err
	}
	if err := cmp.WriteTable(os.Stdout); err != nil {
		return err
	}
	if !cmp.Pass {
		return fmt.Errorf("%w: see %s", errVerdict, filepath.Join(*out, reports.ReportFile))
	}
	return nil
}

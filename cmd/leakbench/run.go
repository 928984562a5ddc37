package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/runner"
	"github.com/leakbench/leakbench/reports"
)

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	profile := fs.String("profile", "ci", "built-in profile: "+strings.Join(runner.ProfileNames(), ", "))
	scenario := fs.String("scenario", "", "a profile or scenario file to use instead of --profile")
	variant := fs.String("variant", "fixed", "gateway variant to run against; known: "+gateway.VariantNames())
	out := fs.String("out", "", "run directory to write (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench run --variant V --out DIR [flags]\n\nStarts a local PostgreSQL + PgBouncer + reference gateway with the variant, plays the profile's\nload, probes the database, and writes the run directory (summary.json, report.md, samples.jsonl,\nepisodes.jsonl, logs/).\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	p, err := loadProfile(*profile, *scenario)
	if err != nil {
		return err
	}
	if err := overrideVariants(&p, *variant, ""); err != nil {
		return err
	}
	sum, err := runner.Run(ctx, runner.Options{Profile: p, Variant: *variant, Name: *variant, Dir: *out, Force: *force, Log: os.Stderr, Version: version})
	if err != nil {
		return err
	}
	if _, err := reports.RenderRun(*out); err != nil {
		return fmt.Errorf("render reports: %w", err)
	}
	fmt.Println()
	if err := sum.WriteMarkdown(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s/report.html\n", *out)
	return nil
}

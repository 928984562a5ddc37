package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/runner"
)

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	profile := fs.String("profile", "ci", "built-in profile: ci")
	variant := fs.String("variant", "fixed", "gateway variant to run against; known: "+gateway.VariantNames())
	out := fs.String("out", "", "run directory to write (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	duration := fs.Duration("duration", 0, "override the profile's load duration")
	users := fs.Int("users", 0, "override the profile's number of virtual users")
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
	p, err := runner.LookupProfile(*profile)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := overrideProfile(&p, *variant, "", *duration, *users); err != nil {
		return err
	}
	sum, err := runner.Run(ctx, runner.Options{Profile: p, Variant: *variant, Name: *variant, Dir: *out, Force: *force, Log: os.Stderr, Version: version})
	if err != nil {
		return err
	}
	fmt.Println()
	if err := sum.WriteMarkdown(os.Stdout); err != nil {
		return err
	}
	return nil
}

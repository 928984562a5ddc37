package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/history/trend"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func cmdTrend(_ context.Context, c *cli, args []string) error {
	fs := c.flagSet("trend")
	out := fs.String("out", "", "directory for trend.html, trend.md and plots/ (required; created, or empty)")
	force := fs.Bool("force", false, "replace the trend in a non-empty --out directory that leakbench wrote")
	profile := fs.String("profile", "", "the profile whose entries to draw (default: the newest entry's)")
	variant := fs.String("variant", "", "the (after) variant whose entries to draw (default: the newest entry's)")
	baseline := fs.String("baseline", history.BaselineLast, "the entry to mark as the baseline: last (the newest passing one), an entry ID, or none")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench trend HISTORY_DIR --out DIR [flags]\n\nDraws the key figures of a history directory (written by run/signoff --history) release after\nrelease: a self-contained trend.html, trend.md and plots/NAME.png|svg, the baseline marked.\n\n")
		printFlags(fs.Output(), fs)
	}
	pos, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: leakbench trend HISTORY_DIR --out DIR", cliflag.ErrUsage)
	}
	dir := pos[0]
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	st, err := history.OpenExisting(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if _, err := os.Stat(filepath.Join(dir, history.MarkerFile)); err != nil {
		fmt.Fprintf(c.stderr, "leakbench: warning: %s has no %s marker; reading its entries anyway\n", dir, history.MarkerFile)
	}
	entries, warnings, err := st.List()
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(c.stderr, "leakbench: warning: history %s\n", w)
	}
	t, err := trend.New(entries, trend.Options{Profile: *profile, Variant: *variant, Baseline: *baseline})
	if errors.Is(err, trend.ErrEmpty) || errors.Is(err, history.ErrNotFound) {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if err != nil {
		return err
	}
	// The --out rules of every command: a new or empty directory, or with
	// --force one that holds only leakbench's own output.
	if err := rundir.Prepare(*out, *force); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if err := t.Write(*out); err != nil {
		rundir.Discard(*out)
		return err
	}
	if err := t.WriteMarkdown(c.stdout); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\ntrend: %s/%s (%d entries; %d skipped)\n", *out, trend.HTMLFile, len(t.Entries), len(warnings))
	return nil
}

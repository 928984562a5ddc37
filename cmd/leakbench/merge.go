package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

func cmdMerge(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("merge")
	out := fs.String("out", "", "merged run directory to write (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory leakbench made")
	shards := fs.Int("shards", 0, "how many shards there are (default: as the shards' own results say); a shard with no directory is then named missing")
	wait := fs.Duration("wait", 0, "wait up to this long for shards whose results are not there yet (e.g. 35m for a 30-minute run); 0: not at all")
	skew := fs.Duration("max-skew", merge.DefaultMaxSkew, "a shard whose load started more than this after the first (or after its --start-at) is late")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench merge SHARD_DIR... --out DIR [flags]\n\nAdds up the run directories of `leakbench run --shard i/N` into one run directory that report,\ncompare and signoff read like any other: counts summed, latency histograms merged (percentiles\nexact), thresholds judged on the merged result. Exit 0 pass, 99 a threshold failed, 1 a shard is\nmissing, failed or late (each is named) or nothing could be merged.\n\n")
		printFlags(fs.Output(), fs)
	}
	dirs, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 || *out == "" {
		return fmt.Errorf("%w: want SHARD_DIR... --out DIR", cliflag.ErrUsage)
	}
	if *shards < 0 || *wait < 0 || *wait > 24*time.Hour {
		return fmt.Errorf("%w: --shards must be >= 0 and --wait 0 to 24h", cliflag.ErrUsage)
	}
	res, err := merge.Run(ctx, merge.Options{Dirs: dirs, Out: *out, Force: *force, Shards: *shards, Wait: *wait, MaxSkew: *skew, Log: c.progress()})
	if res != nil {
		for _, p := range res.Problems {
			fmt.Fprintf(c.stderr, "leakbench: %s\n", p)
		}
	}
	if err != nil {
		return err
	}
	if _, err := render.Report(*out); err != nil {
		return fmt.Errorf("render reports: %w", err)
	}
	if err := render.WriteSummary(c.tables(), res.Summary); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nreport: %s/report.html\n", *out)
	if len(res.Problems) > 0 {
		return fmt.Errorf("merged %d shard(s), but %d problem(s): the merge does not pass", res.Merged, len(res.Problems))
	}
	// The merged load's thresholds are the verdict (a probe, if the shards
	// had one, is not merged).
	if failed := render.FailedThresholds(res.Summary); len(failed) > 0 {
		return fmt.Errorf("%w; the thresholds that did not hold: %s", errVerdict, strings.Join(failed, "; "))
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/history/record"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/reports"
)

// historyFlags are the flags run and signoff share for the history
// (--history, --release), baselines (--baseline, --regression-rule; signoff
// only) and git bisect (--bisect). What they record is
// internal/app/history/record's.
type historyFlags struct {
	record.Recorder
	bisect bool
}

func addHistoryFlags(c *cli, fs *flag.FlagSet, signoff bool) *historyFlags {
	h := &historyFlags{Recorder: record.Recorder{Rules: history.DefaultRules(), Version: version, Out: c.stdout, Tables: c.tables(), Warn: c.stderr}}
	what := "the run's"
	if signoff {
		what = "the sign-off's"
	}
	fs.StringVar(&h.Dir, "history", "", "append "+what+" result to this history `DIR` (created if missing; format: internal/app/history/FORMAT.md)")
	fs.StringVar(&h.Release, "release", "", "with --history: the `NAME` of the build under test (default $"+history.ReleaseEnvVar+", else `git describe` of the working directory, else unknown)")
	fs.BoolVar(&h.bisect, "bisect", false, "exit codes for git bisect run: 0 good, 1 bad (the verdict failed), 125 skip (the run could not be done); 128 (bad usage) and 130 (interrupted) stop the bisect")
	if signoff {
		fs.StringVar(&h.Baseline, "baseline", "", "with --history: also compare after with a baseline entry: last (the newest passing one of the same profile and after variant; none yet: a warning, no failure) or an entry `ID`; a regression exits 99")
		fs.Func("regression-rule", "override a baseline rule, `FIGURE=RATIO:FLOOR` (repeatable), e.g. release_p99_seconds=2:0.2; rules: internal/app/history/FORMAT.md", func(s string) error {
			return history.SetRule(h.Rules, s)
		})
	}
	return h
}

// recordRun appends a run to the history (when asked) and turns a failed
// verdict — a leak check or a threshold — into exit 99 (with --bisect, a
// "bad" commit), as k6 does for thresholds: a CI step that runs leakbench
// against its service fails when the report says FAIL.
//
// judge false (a shard's slice of the load) records without judging: a
// slice's counts say nothing of the whole's verdict.
func (h *historyFlags) recordRun(ctx context.Context, out string, r *reports.Run, judge bool) error {
	pass, checks := render.Verdict(r)
	if err := h.Run(ctx, out, pass, checks); err != nil {
		return err
	}
	if judge && !pass {
		var failed []string
		for _, c := range checks {
			if !c.Pass {
				failed = append(failed, c.Name)
			}
		}
		return fmt.Errorf("%w; the checks that did not hold: %s", errVerdict, strings.Join(failed, "; "))
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

// historyFlags are the flags run and signoff share for the history
// (--history, --release), baselines (--baseline, --regression-rule; signoff
// only) and git bisect (--bisect).
type historyFlags struct {
	dir      string
	release  string
	baseline string
	rules    []history.Rule
	bisect   bool

	store *history.Store
	base  *history.Entry
	c     *cli
}

func addHistoryFlags(c *cli, fs *flag.FlagSet, signoff bool) *historyFlags {
	h := &historyFlags{rules: history.DefaultRules(), c: c}
	what := "the run's"
	if signoff {
		what = "the sign-off's"
	}
	fs.StringVar(&h.dir, "history", "", "append "+what+" result to this history `DIR` (created if missing; format: internal/app/history/FORMAT.md)")
	fs.StringVar(&h.release, "release", "", "with --history: the `NAME` of the build under test (default $"+history.ReleaseEnvVar+", else `git describe` of the working directory, else unknown)")
	fs.BoolVar(&h.bisect, "bisect", false, "exit codes for git bisect run: 0 good, 1 bad (the verdict failed), 125 skip (the run could not be done); 128 (bad usage) and 130 (interrupted) stop the bisect")
	if signoff {
		fs.StringVar(&h.baseline, "baseline", "", "with --history: also compare after with a baseline entry: last (the newest passing one of the same profile and after variant; none yet: a warning, no failure) or an entry `ID`; a regression exits 99")
		fs.Func("regression-rule", "override a baseline rule, `FIGURE=RATIO:FLOOR` (repeatable), e.g. release_p99_seconds=2:0.2; rules: internal/app/history/FORMAT.md", func(s string) error {
			return history.SetRule(h.rules, s)
		})
	}
	return h
}

// prepare checks the flags and opens the history; with --baseline it finds
// the baseline before anything runs, so that a wrong ID costs no run.
func (h *historyFlags) prepare(profile, variant string) error {
	if h.dir == "" {
		if h.baseline != "" {
			return fmt.Errorf("%w: --baseline needs --history DIR", errUsage)
		}
		if h.release != "" {
			return fmt.Errorf("%w: --release labels the entry --history DIR appends; give --history too", errUsage)
		}
		return nil
	}
	st, err := history.Open(h.dir)
	if err != nil {
		return err
	}
	h.store = st
	if h.baseline == "" {
		return nil
	}
	if h.baseline != history.BaselineLast && strings.ContainsAny(h.baseline, `/\`) {
		return fmt.Errorf("%w: --baseline %q: want last or an entry ID", errUsage, h.baseline)
	}
	entries := h.list()
	base, err := history.SelectBaseline(entries, h.baseline, profile, variant)
	if err != nil {
		return fmt.Errorf("%w: --baseline: %w in %s (%d entries; `leakbench trend %s --out DIR` lists them)", errUsage, err, h.dir, len(entries), h.dir)
	}
	if base == nil {
		fmt.Fprintf(h.c.stderr, "leakbench: warning: --baseline last: no passing entry of profile %q, variant %q in %s yet; this sign-off is compared with nothing and, if it passes, becomes the baseline\n", profile, variant, h.dir)
	} else {
		fmt.Fprintf(h.c.stderr, "leakbench: baseline %s (release %s, recorded %s)\n", base.ID, base.Release, base.Recorded.Format("2006-01-02 15:04 MST"))
	}
	h.base = base
	return nil
}

// list reads the history, printing what it skips.
func (h *historyFlags) list() []*history.Entry {
	entries, warnings, err := h.store.List()
	if err != nil {
		fmt.Fprintf(h.c.stderr, "leakbench: warning: %v\n", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(h.c.stderr, "leakbench: warning: history %s\n", w)
	}
	return entries
}

// newEntry makes the entry of a run directory's summary.json.
func (h *historyFlags) newEntry(ctx context.Context, kind, runDir string) (*history.Entry, error) {
	raw, err := os.ReadFile(filepath.Join(runDir, rundir.SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	e, err := history.NewEntry(kind, raw)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", runDir, err)
	}
	if e.Leakbench.Version == "" {
		e.Leakbench.Version = version
	}
	wd, _ := os.Getwd()
	e.Release, e.ReleaseSource = history.ResolveRelease(ctx, h.release, wd)
	return e, nil
}

// recordSignoff compares the sign-off with the baseline (when asked) and
// appends it to the history (when asked). It reports whether a figure
// regressed.
func (h *historyFlags) recordSignoff(ctx context.Context, out string, cmp *reports.Comparison) (regressed bool, err error) {
	if h.store == nil {
		return false, nil
	}
	e, err := h.newEntry(ctx, history.KindSignoff, filepath.Join(out, "after"))
	if err != nil {
		return false, err
	}
	if raw, err := os.ReadFile(filepath.Join(out, "before", rundir.SummaryFile)); err == nil {
		if err := e.SetBefore(raw); err != nil {
			fmt.Fprintf(h.c.stderr, "leakbench: warning: history: %v\n", err)
		}
	}
	e.RunDir = out
	e.VerdictPass = cmp.Pass
	for _, c := range cmp.Checks {
		e.Checks = append(e.Checks, history.Check{Name: c.Name, Pass: c.Pass, Detail: redact.String(c.Detail)})
	}
	if h.baseline != "" {
		b := history.Judge(h.baseline, h.base, e, h.rules)
		e.Baseline = b
		regressed = b.Regressed
		if err := render.Baseline(out, b); err != nil {
			return regressed, err
		}
		fmt.Fprintln(h.c.tables())
		if err := b.WriteTable(h.c.tables()); err != nil {
			return regressed, err
		}
	}
	e.Pass = e.VerdictPass && !regressed
	id, err := h.store.Append(e)
	if err != nil {
		return regressed, err
	}
	fmt.Fprintf(h.c.stdout, "\nhistory: recorded %s (release %s, %s) in %s\n", id, e.Release, passWord(e.Pass), h.dir)
	return regressed, nil
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
	if h.store != nil {
		e, err := h.newEntry(ctx, history.KindRun, out)
		if err != nil {
			return err
		}
		e.RunDir, e.Pass, e.VerdictPass, e.Checks = out, pass, pass, checks
		id, err := h.store.Append(e)
		if err != nil {
			return err
		}
		fmt.Fprintf(h.c.stdout, "history: recorded %s (release %s, %s) in %s\n", id, e.Release, passWord(pass), h.dir)
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

func passWord(pass bool) string {
	if pass {
		return "passed"
	}
	return "failed"
}

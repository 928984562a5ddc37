package record

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

// Recorder records the runs and sign-offs of one command in a history
// directory, as the command's --history, --release, --baseline and
// --regression-rule flags say. With no Dir it records nothing.
type Recorder struct {
	// Dir is the history directory (--history; "": no history).
	Dir string
	// Release names the build under test (--release; "": $LEAKBENCH_RELEASE,
	// else `git describe` of the working directory, else unknown).
	Release string
	// Baseline is the entry a sign-off is compared with (--baseline): last,
	// an entry ID, or "" for none.
	Baseline string
	// Rules are the noise rules of the comparison (--regression-rule).
	Rules []history.Rule
	// Version is leakbench's, for a summary.json that names none.
	Version string
	// Out is told what was recorded; Tables gets the baseline's table
	// (io.Discard with --quiet); Warn gets what was skipped.
	Out, Tables, Warn io.Writer

	// Base is the baseline entry Prepare found; nil when none was asked
	// for, or --baseline last found no passing entry yet.
	Base  *history.Entry
	store *history.Store
}

// Prepare checks the flags and opens the history; with --baseline it finds
// the baseline before anything runs, so that a wrong ID costs no run.
func (r *Recorder) Prepare(profile, variant string) error {
	if r.Dir == "" {
		if r.Baseline != "" {
			return fmt.Errorf("%w: --baseline needs --history DIR", cliflag.ErrUsage)
		}
		if r.Release != "" {
			return fmt.Errorf("%w: --release labels the entry --history DIR appends; give --history too", cliflag.ErrUsage)
		}
		return nil
	}
	st, err := history.Open(r.Dir)
	if err != nil {
		return err
	}
	r.store = st
	if r.Baseline == "" {
		return nil
	}
	if r.Baseline != history.BaselineLast && strings.ContainsAny(r.Baseline, `/\`) {
		return fmt.Errorf("%w: --baseline %q: want last or an entry ID", cliflag.ErrUsage, r.Baseline)
	}
	entries := r.list()
	base, err := history.SelectBaseline(entries, r.Baseline, profile, variant)
	if err != nil {
		return fmt.Errorf("%w: --baseline: %w in %s (%d entries; `leakbench trend %s --out DIR` lists them)", cliflag.ErrUsage, err, r.Dir, len(entries), r.Dir)
	}
	if base == nil {
		fmt.Fprintf(r.Warn, "leakbench: warning: --baseline last: no passing entry of profile %q, variant %q in %s yet; this sign-off is compared with nothing and, if it passes, becomes the baseline\n", profile, variant, r.Dir)
	} else {
		fmt.Fprintf(r.Warn, "leakbench: baseline %s (release %s, recorded %s)\n", base.ID, base.Release, base.Recorded.Format("2006-01-02 15:04 MST"))
	}
	r.Base = base
	return nil
}

// list reads the history, printing what it skips.
func (r *Recorder) list() []*history.Entry {
	entries, warnings, err := r.store.List()
	if err != nil {
		fmt.Fprintf(r.Warn, "leakbench: warning: %v\n", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(r.Warn, "leakbench: warning: history %s\n", w)
	}
	return entries
}

// newEntry makes the entry of a run directory's summary.json.
func (r *Recorder) newEntry(ctx context.Context, kind, runDir string) (*history.Entry, error) {
	raw, err := os.ReadFile(filepath.Join(runDir, rundir.SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	e, err := history.NewEntry(kind, raw)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", runDir, err)
	}
	if e.Leakbench.Version == "" {
		e.Leakbench.Version = r.Version
	}
	wd, _ := os.Getwd()
	e.Release, e.ReleaseSource = history.ResolveRelease(ctx, r.Release, wd)
	return e, nil
}

// Signoff compares the sign-off with the baseline (when asked) and
// appends it to the history (when asked). It reports whether a figure
// regressed.
func (r *Recorder) Signoff(ctx context.Context, out string, cmp *reports.Comparison) (regressed bool, err error) {
	if r.store == nil {
		return false, nil
	}
	e, err := r.newEntry(ctx, history.KindSignoff, filepath.Join(out, "after"))
	if err != nil {
		return false, err
	}
	if raw, err := os.ReadFile(filepath.Join(out, "before", rundir.SummaryFile)); err == nil {
		if err := e.SetBefore(raw); err != nil {
			fmt.Fprintf(r.Warn, "leakbench: warning: history: %v\n", err)
		}
	}
	e.RunDir = out
	e.VerdictPass = cmp.Pass
	for _, c := range cmp.Checks {
		e.Checks = append(e.Checks, history.Check{Name: c.Name, Pass: c.Pass, Detail: redact.String(c.Detail)})
	}
	if r.Baseline != "" {
		b := history.Judge(r.Baseline, r.Base, e, r.Rules)
		e.Baseline = b
		regressed = b.Regressed
		if err := render.Baseline(out, b); err != nil {
			return regressed, err
		}
		fmt.Fprintln(r.Tables)
		if err := b.WriteTable(r.Tables); err != nil {
			return regressed, err
		}
	}
	e.Pass = e.VerdictPass && !regressed
	id, err := r.store.Append(e)
	if err != nil {
		return regressed, err
	}
	fmt.Fprintf(r.Out, "\nhistory: recorded %s (release %s, %s) in %s\n", id, e.Release, passWord(e.Pass), r.Dir)
	return regressed, nil
}

// Run appends the run in out to the history (when asked), with the
// verdict its report gives (render.Verdict).
func (r *Recorder) Run(ctx context.Context, out string, pass bool, checks []history.Check) error {
	if r.store == nil {
		return nil
	}
	e, err := r.newEntry(ctx, history.KindRun, out)
	if err != nil {
		return err
	}
	e.RunDir, e.Pass, e.VerdictPass, e.Checks = out, pass, pass, checks
	id, err := r.store.Append(e)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "history: recorded %s (release %s, %s) in %s\n", id, e.Release, passWord(pass), r.Dir)
	return nil
}

func passWord(pass bool) string {
	if pass {
		return "passed"
	}
	return "failed"
}

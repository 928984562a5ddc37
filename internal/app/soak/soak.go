// Package soak plays a soak (leakbench soak): one run of a profile's
// constant load on a fresh stack, with a baseline before it and a
// cool-down after it in which the probes keep sampling, then judges each
// resource's trend over the steady window (package reports/soak) and
// writes the verdict into the run directory's summary.json (soak), its
// report and plots/soak.png. Growth that the cool-down does not undo
// fails the soak (ErrGrowing); a soak that could judge nothing is
// ErrNotJudged, never a pass.
//
//	res, err := soak.Run(ctx, soak.Options{Profile: p, Variant: "commit-in-finally-rare", Dir: "out/soak"})
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	judge "github.com/leakbench/leakbench/reports/soak"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// ErrGrowing is returned when a resource of the service grew under the
// constant load and did not come back in the cool-down.
var ErrGrowing = errors.New("soak: a resource grew under constant load and did not recover")

// ErrNotJudged is returned when no resource could be judged (too short a
// soak, nothing sampled, no cool-down).
var ErrNotJudged = errors.New("soak: not judged")

// Options configure one soak.
type Options struct {
	// Profile's plan is the constant load; its stack and probe settings
	// are the run's.
	Profile profiles.Profile
	// Variant is the reference gateway's variant.
	Variant string
	// Dir is the run directory; Force clears an earlier one.
	Dir   string
	Force bool
	// Env is the stack's provider (auto, docker, local, external) and
	// External the user's endpoints for external.
	Env      string
	External fixtures.External
	// Target has the engine's TLS and OAuth settings for the user's own
	// service (runner.Options.Target); with Env external the soak plays
	// against that service with the same probes as a run. A target that
	// does not answer fails before any load.
	Target runner.TargetOptions
	// Settings are the soak's (judge.Defaults fills what is left zero);
	// a CoolDown of zero is allowed and judged "not judged".
	Settings rundir.SoakSettings
	// Log receives progress lines; nil discards them.
	Log     io.Writer
	Version string
	// Telemetry, if set, exports the soak over OTLP as a run's
	// (runner.Options.Telemetry).
	Telemetry runner.Telemetry
	// Workers plays the load as worker processes (runner.Options.Workers);
	// leakbench's own resources then sampled are the parent's, not the
	// workers'.
	Workers workers.Config
	// Watch, if set, follows the soak's run live (the dashboard's soak
	// view), from the baseline's probes to the cool-down's.
	Watch runner.Watch
}

// Run plays the soak and judges it. The summary (with its Soak section)
// is returned on every path where the run directory was written; err is
// ErrGrowing or ErrNotJudged for a verdict other than flat.
func Run(ctx context.Context, o Options) (*rundir.Summary, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	set := judge.Defaults(o.Settings)
	var ph judge.Phases
	var smp *sampler
	hooks := &runner.SoakHooks{CoolDown: set.CoolDown,
		BeforeLoad: func(ctx context.Context, env *fixtures.Env) (func(), error) {
			ph.BaselineStart = time.Now().UTC()
			var err error
			if smp, err = startSampler(ctx, o.Dir, env.GatewayMetricsURL); err != nil {
				return nil, err
			}
			fmt.Fprintf(logw, "[soak] baseline: the probes sample %s with no load\n", set.Baseline)
			select {
			case <-ctx.Done():
			case <-time.After(set.Baseline):
			}
			return func() {
				ph.CoolDownEnd = time.Now().UTC()
				if err := smp.Stop(); err != nil {
					fmt.Fprintf(logw, "[soak] %s: %v\n", rundir.ProcessFile, err)
				}
			}, ctx.Err()
		}}
	sum, err := runner.Run(ctx, runner.Options{Profile: o.Profile, Variant: o.Variant, Name: "soak", Dir: o.Dir, Force: o.Force,
		Log: logw, Version: o.Version, Env: o.Env, External: o.External, Target: o.Target, Soak: hooks, Telemetry: o.Telemetry, Workers: o.Workers, Watch: o.Watch})
	if err != nil {
		return sum, err
	}
	if sum.Load == nil || sum.Probe == nil {
		return sum, fmt.Errorf("soak: the run has no load or no probe to judge (the soak needs the probes: a stack, or --probe-dsn)")
	}
	ph.LoadStart, ph.LoadEnd = sum.Load.Started, sum.Load.Ended
	res, series, err := judge.Analyze(o.Dir, set, ph, time.Duration(sum.Probe.StuckAfterSeconds*float64(time.Second)))
	if err != nil {
		return sum, fmt.Errorf("judge the soak: %w", err)
	}
	sum.Soak = res
	if err := reports.WriteRun(o.Dir, sum); err != nil {
		return sum, fmt.Errorf("write the soak's summary: %w", err)
	}
	if err := judge.WritePlot(o.Dir, res, series); err != nil {
		return sum, err
	}
	if _, err := reports.RenderRun(o.Dir); err != nil {
		return sum, fmt.Errorf("render the soak's report: %w", err)
	}
	for _, r := range res.Resources {
		fmt.Fprintf(logw, "[soak] %s: %s\n", r.Name, r.Line)
	}
	if l := res.Leakbench; l != nil {
		fmt.Fprintf(logw, "[soak] %s: %s\n", l.Name, l.Line)
	}
	for i, c := range res.Culprits {
		if i == 3 {
			break
		}
		fmt.Fprintf(logw, "[soak] accumulated: %d × %s from %s\n", c.Episodes, c.ExampleQuery, c.ApplicationName)
	}
	fmt.Fprintf(logw, "[soak] %s\n", judge.Headline(res))
	switch res.Verdict {
	case judge.Growing:
		return sum, ErrGrowing
	case judge.NotJudged:
		return sum, ErrNotJudged
	}
	return sum, nil
}

// SlopeKinds are the resource kinds a slope threshold may name (the
// soak: section's slopes, --slope KIND=PERHOUR).
func SlopeKinds() []string { return judge.KindNames() }

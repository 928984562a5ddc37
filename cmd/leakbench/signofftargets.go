package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/app/ownservice"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/verdict"
)

// signoffTargetFlags are what `signoff --before-target URL --after-target
// URL` was given: the two sides' service flags, the shared ones they fall
// back to, and the sign-off's own.
type signoffTargetFlags struct {
	fs                    *flag.FlagSet
	shared, before, after *ownservice.Service
	mode                  string
	load                  *loadFlags
	capacity              bool
	hist                  *historyFlags
	o                     runner.SignoffOptions
}

// signoffTargets signs off two running builds of the user's own service
// under --mode. Every usage error is found before any load.
func signoffTargets(ctx context.Context, c *cli, f signoffTargetFlags, otlp otlpFlags) error {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case f.shared.Target != "":
		return fmt.Errorf("%w: a sign-off loads two builds: give --before-target URL and --after-target URL, not --target", cliflag.ErrUsage)
	case given["variant-before"] || given["variant-after"]:
		return fmt.Errorf("%w: --variant-before/--variant-after pick the reference gateway's variants; --before-target/--after-target are your own builds: give one pair", cliflag.ErrUsage)
	case given["env"]:
		return fmt.Errorf("%w: --env picks where leakbench starts its stacks; with --before-target/--after-target it starts none", cliflag.ErrUsage)
	case f.load.profile == runner.AllProfile && f.load.scenario == "":
		return fmt.Errorf("%w: --profile %s signs off the reference gateway's patterns; give your own builds a scenario (--scenario FILE) or one profile", cliflag.ErrUsage, runner.AllProfile)
	case f.capacity:
		return fmt.Errorf("%w: --capacity searches the reference gateway's variants; search each of your builds with leakbench capacity --target URL", cliflag.ErrUsage)
	}
	mode, err := verdict.ParseMode(f.mode)
	if err != nil {
		return fmt.Errorf("%w: --mode is required with two targets: %w", cliflag.ErrUsage, err)
	}
	topts, err := f.shared.Conn.Options()
	if err != nil {
		return err
	}
	o := f.o
	o.Mode = mode
	for _, side := range []struct {
		svc *ownservice.Service
		dst **runner.SignoffTarget
	}{{f.before, &o.Before}, {f.after, &o.After}} {
		if side.svc.Target == "" {
			continue // CheckSignoff says which is missing
		}
		side.svc.WithDefaults(f.shared)
		ext, err := side.svc.External(topts)
		if err != nil {
			return err
		}
		*side.dst = &runner.SignoffTarget{External: ext, Target: topts, Name: side.svc.Name}
	}
	if err := runner.CheckSignoff(o); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	p, err := f.load.load()
	if err != nil {
		return err
	}
	o.Profile = p
	// The history knows the runs by profile; the builds are no variants.
	if err := f.hist.Prepare(p.Name, ""); err != nil {
		return err
	}
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	o.Telemetry = telemetry(tel)
	start := time.Now()
	cmp, err := runner.Signoff(ctx, o)
	if errors.Is(err, runner.ErrSignoffTargets) {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.tables())
	if err := cmp.WriteTable(c.tables()); err != nil {
		return err
	}
	regressed, err := f.hist.Signoff(ctx, o.Out, cmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nsign-off (%s) took %s; report: %s/report.md\n", mode, time.Since(start).Round(time.Second), o.Out)
	if !cmp.Pass {
		return fmt.Errorf("%w: see %s/report.md", errVerdict, o.Out)
	}
	if regressed {
		return fmt.Errorf("%w: after regressed against the baseline; see %s", errVerdict, filepath.Join(o.Out, rundir.BaselineReportFile))
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/capacity"
	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/verdict"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

func cmdSignoff(ctx context.Context, c *cli, args []string) (err error) {
	fs := c.flagSet("signoff")
	ld := addLoadFlags(fs, "ci", "built-in profile: "+strings.Join(profiles.Names(), ", ")+" (ci: both runs in about 90 s on 2 cores), or "+runner.AllProfile+": every pattern's in turn ("+strings.Join(runner.AllPatterns, ", ")+"), one report and one verdict", "vus", "duration", "iterations") // load.go
	out := fs.String("out", "", "directory for the run directories (before/, after/) and the comparison (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	env := fs.String("env", "auto", envHelp+"; a fresh stack for each run")
	before := fs.String("variant-before", "", "gateway variant of the before run (default from the profile: commit-in-finally); known: "+gateway.VariantNames())
	after := fs.String("variant-after", "", "gateway variant of the after run (default from the profile: fixed)")
	metricsAddr := fs.String("metrics-addr", "", "serve the load engine's and the probe's live Prometheus metrics at http://ADDR/metrics while each run's load runs (e.g. 127.0.0.1:9464)")
	shards := fs.Int("shards", 0, "play each run's load as `N` leakbench containers on the docker stack's network (--env docker), merged exactly into the run while this process probes; the engine's live metrics are then the shards' own, not served")
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in the run directory and reports (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	withCapacity := fs.Bool("capacity", false, "after the sign-off, search both variants' capacity as leakbench capacity does (the profile's capacity: section, e.g. --profile capacity) into OUT/capacity/, and say how the fix moved it (\"raised capacity from 38 to 410 users, 10.8×\"); exit 99 also when a variant is below the section's min, 1 when a search is inconclusive")
	mode := fs.String("mode", "", "the question asked: fix (before must show the leak, after must not) or regression (after must be no worse than before); required with --before-target and --after-target (default for the reference gateway's variants: fix)")
	svc := addServiceFlags(c, fs, serviceParts{load: true}) // service.go: shared by both sides
	beforeSvc := addSideFlags(fs, "before-")
	afterSvc := addSideFlags(fs, "after-")
	otlp := addOTLPFlags(fs)
	hist := addHistoryFlags(c, fs, true)
	wf := addWorkersFlags(fs)       // workers.go
	sizeFlags := addSizingFlags(fs) // sizing.go: the --capacity search's Sizing
	dash := addDashboardFlags(fs)   // dashboard.go
	defer func() { err = hist.exit(workersExit(err), args) }()
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench signoff --out DIR [flags]\n       leakbench signoff --before-target URL --after-target URL --mode fix|regression --scenario FILE --out DIR [flags]\n\nRuns the same load against the leaky gateway (before) and the fixed one (after), each on a fresh\nPostgreSQL + PgBouncer (containers or local processes, see --env), probes pg_stat_activity and PgBouncer, and compares.\nExit 0 when before shows the leak and after shows none, 99 when a check fails.\n\nWith --before-target and --after-target it loads two running builds of your own service instead,\none after the other, and judges them under --mode (required): fix (before must leak, after must\nnot) or regression (after no worse than before). Each side's --before-*/--after-* probe flags\nfall back to the shared ones (--probe-dsn, --metrics-url, …).\n")
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	wcfg, err := wf.config()
	if err != nil {
		return err
	}
	sizeOpts, sizeGiven, err := sizeFlags.options()
	if err != nil {
		return err
	}
	if sizeGiven && !*withCapacity {
		return fmt.Errorf("%w: --target-rate and --replicas size the capacity search's pools: add --capacity (each run of a sign-off is sized for the highest rate it saw; leakbench report --target-rate R DIR re-sizes one)", cliflag.ErrUsage)
	}
	// Before any load: a bad address fails here. Each side's run is a
	// part of the page (the view draws them side by side).
	view := dashboard.NewSignoffView()
	d, err := dash.start(ctx, "sign-off", view, c.stderr)
	if err != nil {
		return err
	}
	defer func() { err = d.close(err, *out) }()
	if beforeSvc.Target != "" || afterSvc.Target != "" || svc.Target != "" {
		return signoffTargets(ctx, c, signoffTargetFlags{fs: fs, shared: svc, before: beforeSvc, after: afterSvc, mode: *mode, load: ld,
			capacity: *withCapacity, hist: hist, o: runner.SignoffOptions{Out: *out, Force: *force, Log: c.progress(), Version: version, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Shards: *shards, Rules: hist.Rules, Workers: wcfg, Watch: d.sides()}}, otlp)
	}
	if err := svc.RefuseWithout("--before-target and --after-target"); err != nil {
		return err
	}
	if beforeSvc.Given() || afterSvc.Given() {
		return fmt.Errorf("%w: the --before-* and --after-* service flags belong to --before-target and --after-target (two running builds of your own service)", cliflag.ErrUsage)
	}
	var signoffMode verdict.Mode
	if *mode != "" {
		if signoffMode, err = verdict.ParseMode(*mode); err != nil {
			return fmt.Errorf("%w: --mode: %w", cliflag.ErrUsage, err)
		}
	}
	switch *env {
	case "auto", "docker", "local":
	default:
		return fmt.Errorf("%w: --env %q: a sign-off starts its own stacks; want auto, docker or local", cliflag.ErrUsage, *env)
	}
	switch {
	case *shards < 0:
		return fmt.Errorf("%w: --shards %d: want a number of shard containers, 2 or more", cliflag.ErrUsage, *shards)
	case *shards > 1 && *env != "docker":
		return fmt.Errorf("%w: --shards runs the shards as containers of each run's stack: add --env docker", cliflag.ErrUsage)
	}
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	if ld.profile == runner.AllProfile && ld.scenario == "" {
		switch {
		case ld.given() != "":
			return fmt.Errorf("%w: --profile %s plays each pattern's own scenario; %s change one profile's", cliflag.ErrUsage, runner.AllProfile, ld.given())
		case *before != "" || *after != "":
			return fmt.Errorf("%w: --profile %s compares each pattern's own variants; --variant-before/--variant-after take one profile", cliflag.ErrUsage, runner.AllProfile)
		case hist.Dir != "" || hist.Baseline != "" || hist.Release != "":
			return fmt.Errorf("%w: --history, --release and --baseline record one sign-off; with --profile %s sign the patterns off one by one (--profile NAME) to record them", cliflag.ErrUsage, runner.AllProfile)
		case *withCapacity:
			return fmt.Errorf("%w: --capacity searches one profile's pair of variants; with --profile %s give the pattern's profile (--profile NAME)", cliflag.ErrUsage, runner.AllProfile)
		}
		return signoffAll(ctx, c, runner.SignoffOptions{Out: *out, Force: *force, Log: c.progress(), Version: version, Env: *env, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Shards: *shards, Telemetry: telemetry(tel), Workers: wcfg, Watch: d.sides()})
	}
	p, err := ld.load()
	if err != nil {
		return err
	}
	if err := overrideVariants(&p, *before, *after); err != nil {
		return err
	}
	var capSpec *capacity.Spec
	if *withCapacity {
		if *shards > 1 {
			return fmt.Errorf("%w: --capacity runs the search's stages from this process; drop --shards", cliflag.ErrUsage)
		}
		// Checked before the sign-off's runs: a profile the search cannot
		// step fails now, not after minutes of sign-off.
		sp, err := capacity.Resolve(p.Capacity, p.Plan)
		if err == nil {
			err = capacity.CheckPlan(p.Plan, sp)
		}
		if err != nil {
			return fmt.Errorf("%w: --capacity with profile %s: %w (a profile with a capacity: section and one constant-vus scenario searches: --profile capacity)", cliflag.ErrUsage, p.Name, err)
		}
		capSpec = &sp
	}
	if err := hist.Prepare(p.Name, p.VariantAfter); err != nil {
		return err
	}
	start := time.Now()
	cmp, err := runner.Signoff(ctx, runner.SignoffOptions{Profile: p, Out: *out, Force: *force, Log: c.progress(), Version: version, Env: *env, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Shards: *shards, Telemetry: telemetry(tel), Mode: signoffMode, Rules: hist.Rules, Workers: wcfg, Watch: d.sides()})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.tables())
	if err := cmp.WriteTable(c.tables()); err != nil {
		return err
	}
	regressed, err := hist.Signoff(ctx, *out, cmp)
	if err != nil {
		return err
	}
	var capErr error
	if capSpec != nil {
		fmt.Fprintln(c.tables())
		var sum *capreport.Summary
		sum, capErr = searchCapacity(ctx, c, capacity.Options{Profile: p, Spec: *capSpec, Variants: []string{p.VariantBefore, p.VariantAfter},
			Env: *env, Out: filepath.Join(*out, capreport.SignoffDir), Force: *force, Log: c.progress(), Version: version, Telemetry: telemetry(tel), Workers: wcfg, Sizing: sizeOpts,
			Watch: d.capacityWatch(view.Capacity)}) // the searches on the sign-off's page, below its sides
		// What the searches measured — a bound, an inconclusive stop —
		// belongs in the sign-off's own report as well as in capacity/.
		if sum != nil {
			if err := cmp.AddCapacity(*out, sum); err != nil {
				capErr = errors.Join(capErr, fmt.Errorf("sign-off report: %w", err))
			}
		}
	}
	fmt.Fprintf(c.stdout, "\nsign-off took %s; report: %s/report.md\n", time.Since(start).Round(time.Second), *out)
	if !cmp.Pass {
		return fmt.Errorf("%w: see %s/report.md", errVerdict, *out)
	}
	if regressed {
		return fmt.Errorf("%w: after regressed against the baseline; see %s", errVerdict, filepath.Join(*out, rundir.BaselineReportFile))
	}
	return capErr
}

// signoffAll signs off every pattern (runner.SignoffAll): exit 0 only when
// every pattern passes, 99 naming the ones that did not.
func signoffAll(ctx context.Context, c *cli, o runner.SignoffOptions) error {
	start := time.Now()
	m, err := runner.SignoffAll(ctx, runner.SignoffAllOptions{SignoffOptions: o})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.tables())
	if err := m.WriteTable(c.tables()); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nsign-off of every pattern took %s; report: %s/report.md\n", time.Since(start).Round(time.Second), o.Out)
	var broken []string
	for _, p := range m.Patterns {
		if p.Error != "" {
			broken = append(broken, p.Name)
		}
	}
	if len(broken) > 0 {
		// Exit 1, not 99: those sign-offs could not be done at all.
		return fmt.Errorf("the sign-off of %s could not be done (failed: %s); see %s/report.md", strings.Join(broken, ", "), strings.Join(m.Failed, ", "), o.Out)
	}
	if !m.Pass {
		return fmt.Errorf("%w: %s failed; see %s/report.md", errVerdict, strings.Join(m.Failed, ", "), o.Out)
	}
	return nil
}

// loadProfile reads --scenario FILE when given, else the built-in --profile.
func loadProfile(name, file string) (profiles.Profile, error) {
	if file != "" {
		return profiles.Load(file)
	}
	p, err := profiles.Lookup(name)
	if err != nil {
		return p, fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	return p, nil
}

func overrideVariants(p *profiles.Profile, before, after string) error {
	for _, v := range []string{before, after} {
		if v == "" {
			continue
		}
		if _, err := gateway.ParseVariants(v); err != nil {
			return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
		}
	}
	if before != "" {
		p.VariantBefore = before
	}
	if after != "" {
		p.VariantAfter = after
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/capacity"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func cmdSignoff(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("signoff", flag.ContinueOnError)
	profile := fs.String("profile", "ci", "built-in profile: "+strings.Join(runner.ProfileNames(), ", ")+" (ci: both runs in about 90 s on 2 cores), or "+runner.AllProfile+": every pattern's in turn ("+strings.Join(runner.AllPatterns, ", ")+"), one report and one verdict")
	scenario := fs.String("scenario", "", "a profile or scenario file to use instead of --profile (see scenarios/profiles/*.yaml)")
	out := fs.String("out", "", "directory for the run directories (before/, after/) and the comparison (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	env := fs.String("env", "auto", "where each run's stack runs: auto (docker when an engine answers, else local), docker, local")
	before := fs.String("variant-before", "", "gateway variant of the before run (default from the profile: commit-in-finally); known: "+runner.VariantNames())
	after := fs.String("variant-after", "", "gateway variant of the after run (default from the profile: fixed)")
	metricsAddr := fs.String("metrics-addr", "", "serve the load engine's and the probe's live Prometheus metrics at http://ADDR/metrics while each run's load runs (e.g. 127.0.0.1:9464)")
	shards := fs.Int("shards", 0, "play each run's load as `N` leakbench containers on the docker stack's network (--env docker), merged exactly into the run while this process probes; the engine's live metrics are then the shards' own, not served")
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in the run directory and reports (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	withCapacity := fs.Bool("capacity", false, "after the sign-off, search both variants' capacity as leakbench capacity does (the profile's capacity: section, e.g. --profile capacity) into OUT/capacity/, and say how the fix moved it (\"raised capacity from 38 to 410 users, 10.8×\"); exit 99 also when a variant is below the section's min, 1 when a search is inconclusive")
	otlp := addOTLPFlags(fs)
	hist := addHistoryFlags(fs, true)
	defer func() { err = hist.exit(err, args) }()
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench signoff --out DIR [flags]\n\nRuns the same load against the leaky gateway (before) and the fixed one (after), each on a fresh\nPostgreSQL + PgBouncer (containers or local processes, see --env), probes pg_stat_activity and PgBouncer, and compares.\nExit 0 when before shows the leak and after shows none, 99 when a check fails.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	switch *env {
	case "auto", "docker", "local":
	default:
		return fmt.Errorf("%w: --env %q: a sign-off starts its own stacks; want auto, docker or local", errUsage, *env)
	}
	switch {
	case *shards < 0:
		return fmt.Errorf("%w: --shards %d: want a number of shard containers, 2 or more", errUsage, *shards)
	case *shards > 1 && *env != "docker":
		return fmt.Errorf("%w: --shards runs the shards as containers of each run's stack: add --env docker", errUsage)
	}
	tel, err := otlp.start(ctx)
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	if *profile == runner.AllProfile && *scenario == "" {
		switch {
		case *before != "" || *after != "":
			return fmt.Errorf("%w: --profile %s compares each pattern's own variants; --variant-before/--variant-after take one profile", errUsage, runner.AllProfile)
		case hist.dir != "" || hist.baseline != "" || hist.release != "":
			return fmt.Errorf("%w: --history, --release and --baseline record one sign-off; with --profile %s sign the patterns off one by one (--profile NAME) to record them", errUsage, runner.AllProfile)
		case *withCapacity:
			return fmt.Errorf("%w: --capacity searches one profile's pair of variants; with --profile %s give the pattern's profile (--profile NAME)", errUsage, runner.AllProfile)
		}
		return signoffAll(ctx, runner.SignoffOptions{Out: *out, Force: *force, Log: os.Stderr, Version: version, Env: *env, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Shards: *shards, Telemetry: telemetry(tel)})
	}
	p, err := loadProfile(*profile, *scenario)
	if err != nil {
		return err
	}
	if err := overrideVariants(&p, *before, *after); err != nil {
		return err
	}
	var capSpec *capacity.Spec
	if *withCapacity {
		if *shards > 1 {
			return fmt.Errorf("%w: --capacity runs the search's stages from this process; drop --shards", errUsage)
		}
		// Checked before the sign-off's runs: a profile the search cannot
		// step fails now, not after minutes of sign-off.
		sp, err := capacity.Resolve(p.Capacity, p.Plan)
		if err == nil {
			err = capacity.CheckPlan(p.Plan, sp)
		}
		if err != nil {
			return fmt.Errorf("%w: --capacity with profile %s: %v (a profile with a capacity: section and one constant-vus scenario searches: --profile capacity)", errUsage, p.Name, err)
		}
		capSpec = &sp
	}
	if err := hist.prepare(p.Name, p.VariantAfter); err != nil {
		return err
	}
	start := time.Now()
	cmp, err := runner.Signoff(ctx, runner.SignoffOptions{Profile: p, Out: *out, Force: *force, Log: os.Stderr, Version: version, Env: *env, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Shards: *shards, Telemetry: telemetry(tel)})
	if err != nil {
		return err
	}
	fmt.Println()
	if err := cmp.WriteTable(os.Stdout); err != nil {
		return err
	}
	regressed, err := hist.recordSignoff(ctx, *out, cmp)
	if err != nil {
		return err
	}
	var capErr error
	if capSpec != nil {
		fmt.Println()
		var sum *capacity.Summary
		sum, capErr = searchCapacity(ctx, capacity.Options{Profile: p, Spec: *capSpec, Variants: []string{p.VariantBefore, p.VariantAfter},
			Env: *env, Out: filepath.Join(*out, capacity.SignoffDir), Force: *force, Log: os.Stderr, Version: version, Telemetry: telemetry(tel)})
		// What the searches measured — a bound, an inconclusive stop —
		// belongs in the sign-off's own report as well as in capacity/.
		if sum != nil {
			if err := cmp.AddCapacity(*out, sum); err != nil {
				capErr = errors.Join(capErr, fmt.Errorf("sign-off report: %w", err))
			}
		}
	}
	fmt.Printf("\nsign-off took %s; report: %s/report.md\n", time.Since(start).Round(time.Second), *out)
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
func signoffAll(ctx context.Context, o runner.SignoffOptions) error {
	start := time.Now()
	m, err := runner.SignoffAll(ctx, runner.SignoffAllOptions{SignoffOptions: o})
	if err != nil {
		return err
	}
	fmt.Println()
	if err := m.WriteTable(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nsign-off of every pattern took %s; report: %s/report.md\n", time.Since(start).Round(time.Second), o.Out)
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
func loadProfile(name, file string) (runner.Profile, error) {
	if file != "" {
		return runner.LoadProfile(file)
	}
	p, err := runner.LookupProfile(name)
	if err != nil {
		return p, fmt.Errorf("%w: %v", errUsage, err)
	}
	return p, nil
}

func overrideVariants(p *runner.Profile, before, after string) error {
	for _, v := range []string{before, after} {
		if v == "" {
			continue
		}
		if err := runner.CheckVariants(v); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
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

package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

func cmdRun(ctx context.Context, c *cli, args []string) (err error) {
	fs := c.flagSet("run")
	ld := addLoadFlags(fs, "ci", "built-in profile: "+strings.Join(profiles.Names(), ", "), "vus", "duration", "iterations") // load.go
	variant := fs.String("variant", "fixed", "gateway variant to run against; known: "+gateway.VariantNames())
	out := fs.String("out", "", "run directory to write (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	env := fs.String("env", "auto", envHelp+", or external: your own service (--target alone implies it)")
	svc := addServiceFlags(c, fs, serviceParts{load: true, name: true}) // service.go
	baseline := fs.String("baseline", "", "judge this run against a stored one in regression mode: a run `DIR`, or a history directory (its newest passing run of the same scenario); exit 99 on a regression, 2 when the baseline is not a run or of another scenario (before any load; --force judges it all the same)")
	rules := history.DefaultRules()
	fs.Func("regression-rule", "with --baseline: override a noise rule, `FIGURE=RATIO:FLOOR` (repeatable), e.g. release_p99_seconds=2:0.2; rules: internal/app/history/FORMAT.md", func(s string) error {
		return history.SetRule(rules, s)
	})
	var faultLinks linkFlags // faultproxy.go
	fs.Var(&faultLinks, "fault-link", "external: proxy one of your stack's links for a faults: timeline, `NAME=LISTEN=UPSTREAM` with NAME db (service → PgBouncer), pg (PgBouncer → PostgreSQL) or upstream; point your service at LISTEN (repeat for each link)")
	metricsAddr := fs.String("metrics-addr", "", "serve the load engine's and the probe's live Prometheus metrics at http://ADDR/metrics while the load runs (e.g. 127.0.0.1:9464)")
	wf := addWorkersFlags(fs) // workers.go
	shard := fs.String("shard", "", "play slice `I/N` of every scenario (k6 execution segments: users and arrival rates split so the N slices add up to the whole; user indices unique across shards); merge the N run directories with leakbench merge")
	startAt := fs.String("start-at", "", "start the load at this RFC 3339 `TIME` (after the preflight), so that shards on several machines start together; a time already past starts at once")
	shards := fs.Int("shards", 0, "play the load as `N` leakbench containers on the docker stack's network (--env docker), merged exactly into the run while this process probes (by hand elsewhere: --shard and leakbench merge)")
	otlp := addOTLPFlags(fs)
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in the run directory and reports (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	hist := addHistoryFlags(c, fs, false)
	dash := addDashboardFlags(fs)   // dashboard.go
	sizeFlags := addSizingFlags(fs) // sizing.go
	defer func() { err = hist.exit(err, args) }()
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench run --variant V --out DIR [flags]\n       leakbench run --target URL --scenario FILE --out DIR [--probe-dsn DSN ...] [flags]\n\nStarts a local PostgreSQL + PgBouncer + reference gateway with the variant, plays the profile's\nload, probes the database, and writes the run directory (summary.json, report.md, samples.jsonl,\nepisodes.jsonl, logs/). With --target it loads your own service instead (any http(s) URL);\nwithout --probe-dsn nothing is probed and the thresholds decide the exit code (99: one failed).\n\n")
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	sizeOpts, sizeGiven, err := sizeFlags.options()
	if err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	envGiven := false
	fs.Visit(func(f *flag.Flag) { envGiven = envGiven || f.Name == "env" })
	if svc.Target != "" && !envGiven {
		*env = "external" // --target names your own service
	}
	seg, at, err := shardFlags(*shard, *startAt, time.Now()) // shard.go
	if err != nil {
		return err
	}
	wcfg, err := wf.config()
	if err != nil {
		return err
	}
	switch {
	case *shards < 0:
		return fmt.Errorf("%w: --shards %d: want a number of shard containers, 2 or more", cliflag.ErrUsage, *shards)
	case *shards > 1 && *env != "docker":
		return fmt.Errorf("%w: --shards runs the shards as containers of the stack: add --env docker (shards of your own service: --shard i/N --target URL, then leakbench merge)", cliflag.ErrUsage)
	case *shards > 1 && !seg.Whole():
		return fmt.Errorf("%w: --shards plays every shard itself; --shard plays one: give one of them", cliflag.ErrUsage)
	case *baseline != "" && !seg.Whole():
		return fmt.Errorf("%w: --baseline judges a whole run; a shard's slice is judged once merged (leakbench merge, then leakbench compare --mode regression)", cliflag.ErrUsage)
	}
	if !seg.Whole() && *env != "external" {
		// Each run would start a stack of its own: shards of one run load
		// one service.
		return fmt.Errorf("%w: --shard needs --target (the shards of one run load one service)", cliflag.ErrUsage)
	}
	var ext fixtures.External
	var topts runner.TargetOptions
	name, runVariant := *variant, *variant
	if *env == "external" {
		if svc.Target == "" {
			return fmt.Errorf("%w: --env external needs --target URL (and a probe DSN, %s, to probe its database)", cliflag.ErrUsage, svc.ProbeDSN.Sources())
		}
		if topts, err = svc.Conn.Options(); err != nil {
			return err
		}
		if ext, err = svc.External(topts); err != nil {
			return err
		}
		ext.FaultLinks = faultLinks
		if sizeGiven && ext.ProbeDSN == "" && ext.PostgresDSN == "" {
			return fmt.Errorf("%w: --target-rate and --replicas size the pool from the database's view: give a probe DSN (%s)", cliflag.ErrUsage, svc.ProbeDSN.Sources())
		}
		// Your own service: it is named after itself, and the reference
		// gateway's variants do not apply to it.
		name, runVariant = svc.RunName(), ""
	} else {
		// The environment may hold DSNs for other commands; only flags
		// given here decide the mode.
		if len(faultLinks) > 0 || svc.Target != "" {
			return fmt.Errorf("%w: --target, --probe-dsn, --tokens-file and --fault-link belong to --env external", cliflag.ErrUsage)
		}
		if err := svc.RefuseWithout("--target (--env external)"); err != nil {
			return err
		}
	}
	p, err := ld.load()
	if err != nil {
		return err
	}
	if err := overrideVariants(&p, *variant, ""); err != nil {
		return err
	}
	base, err := openBaseline(c, *baseline, p, *force)
	if err != nil {
		return err
	}
	if err := hist.Prepare(p.Name, *variant); err != nil {
		return err
	}
	d, err := dash.start(ctx, name, nil, c.stderr) // before any load: a bad address fails here
	if err != nil {
		return err
	}
	defer func() { err = d.close(err, *out) }()
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	sum, err := runner.Run(ctx, runner.Options{Profile: p, Variant: runVariant, Name: name, Dir: *out, Force: *force, Log: c.progress(), Version: version, Env: *env, External: ext, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Target: topts, Shard: seg, StartAt: at, Shards: *shards, Telemetry: telemetry(tel), Watch: d.watch(), Workers: wcfg})
	if err != nil {
		return workersExit(err)
	}
	rendered, err := render.Report(*out)
	if err != nil {
		return fmt.Errorf("render reports: %w", err)
	}
	if sizeGiven && seg.Whole() {
		if err := sizeRun(c.progress(), *out, sizeOpts); err != nil {
			return err
		}
	}
	fmt.Fprintln(c.tables())
	if err := render.WriteSummary(c.tables(), sum); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nreport: %s/report.html\n", *out)
	if err := hist.recordRun(ctx, *out, rendered, seg.Whole()); err != nil {
		return err
	}
	if !seg.Whole() {
		// A slice's counts say nothing about the whole's thresholds.
		fmt.Fprintf(c.stderr, "shard %s: thresholds are judged on the merged result: leakbench merge SHARD_DIR... --out DIR\n", seg)
		return nil
	}
	if base != nil {
		if err := judgeBaseline(c, *out, base, rules); err != nil {
			return err
		}
	}
	return loadOnlyVerdict(sum)
}

// openBaseline finds run --baseline REF before any load: a baseline that
// is not a run, or is of another scenario than p's, is a usage error
// naming what differs (unless force). nil when no baseline was asked for.
func openBaseline(c *cli, ref string, p profiles.Profile, force bool) (*render.BaselineRun, error) {
	if ref == "" {
		return nil, nil
	}
	want, err := render.ScenarioOfPlan(p.Name, p.Plan)
	if err != nil {
		return nil, fmt.Errorf("%w: --baseline: %w", cliflag.ErrUsage, err)
	}
	b, err := render.OpenBaseline(ref, want, force)
	if err != nil {
		return nil, fmt.Errorf("%w: --baseline: %w", cliflag.ErrUsage, err)
	}
	for _, n := range b.Notes {
		fmt.Fprintf(c.stderr, "leakbench: baseline %s: %s\n", ref, n)
	}
	return b, nil
}

// judgeBaseline judges the finished run in dir against b in regression
// mode: exit 99 when it regressed (the caller judges the run's own
// thresholds after it).
func judgeBaseline(c *cli, dir string, b *render.BaselineRun, rules []history.Rule) error {
	cmp, _, err := render.JudgeBaseline(dir, b, render.BaselineOptions{Rules: rules})
	if err != nil {
		return fmt.Errorf("judge against the baseline: %w", err)
	}
	fmt.Fprintln(c.tables())
	if err := cmp.WriteTable(c.tables()); err != nil {
		return err
	}
	report := filepath.Join(dir, render.BaselineDirName, rundir.ReportFile)
	fmt.Fprintf(c.stdout, "\nbaseline report: %s\n", report)
	if !cmp.Pass {
		return fmt.Errorf("%w: this run regressed against the baseline %s; see %s", errVerdict, b.Ref, report)
	}
	return nil
}

// loadOnlyVerdict: a load-only run has no leak checks, so its thresholds
// decide the exit code, as k6's do (99 when one failed).
func loadOnlyVerdict(sum *rundir.Summary) error {
	if sum == nil || !sum.Environment.LoadOnly || sum.Load == nil {
		return nil
	}
	if failed := render.FailedThresholds(sum); len(failed) > 0 {
		return fmt.Errorf("%w; the thresholds that did not hold: %s", errVerdict, strings.Join(failed, "; "))
	}
	return nil
}

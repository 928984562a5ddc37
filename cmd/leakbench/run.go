package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/app/runner"
)

func cmdRun(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	profile := fs.String("profile", "ci", "built-in profile: "+strings.Join(runner.ProfileNames(), ", "))
	scenario := fs.String("scenario", "", "a profile or scenario file to use instead of --profile")
	variant := fs.String("variant", "fixed", "gateway variant to run against; known: "+runner.VariantNames())
	out := fs.String("out", "", "run directory to write (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	env := fs.String("env", "auto", "where the stack runs: auto (docker when an engine answers, else local), docker, local, or external (your own service: --target, and --probe-dsn to probe its database; --target alone implies external)")
	runName := fs.String("name", "", "external: the name of your service in reports, summary.json, compare and JUnit (default: the target's host and port)")
	target := fs.String("target", "", "external: your MCP endpoint, any http(s) URL (https://staging.example.com/mcp); without --probe-dsn the run is load only and thresholds decide the exit code")
	metricsURL := fs.String("metrics-url", "", "external: your service's Prometheus endpoint, for its pool metrics (optional)")
	fs.StringVar(metricsURL, "scrape", "", "external: the same as --metrics-url")
	probeDSNFlag := newSecretFlag(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "external: PostgreSQL `DSN` of a role with pg_monitor, direct (not through PgBouncer)", "dsn")
	pgbouncerFlag := newSecretFlag(fs, "pgbouncer-admin-dsn", "LEAKBENCH_PGBOUNCER_ADMIN_DSN", "external: PgBouncer admin console `DSN` (optional)", "pgbouncer")
	tokensFile := fs.String("tokens-file", "", "external: file of bearer tokens, one a line (default: the scenario's tokensFile or tokens)")
	var faultLinks linkFlags // faultproxy.go
	fs.Var(&faultLinks, "fault-link", "external: proxy one of your stack's links for a faults: timeline, `NAME=LISTEN=UPSTREAM` with NAME db (service → PgBouncer), pg (PgBouncer → PostgreSQL) or upstream; point your service at LISTEN (repeat for each link)")
	metricsAddr := fs.String("metrics-addr", "", "serve the load engine's and the probe's live Prometheus metrics at http://ADDR/metrics while the load runs (e.g. 127.0.0.1:9464)")
	tf := addTargetFlags(fs)
	shard := fs.String("shard", "", "play slice `I/N` of every scenario (k6 execution segments: users and arrival rates split so the N slices add up to the whole; user indices unique across shards); merge the N run directories with leakbench merge")
	startAt := fs.String("start-at", "", "start the load at this RFC 3339 `TIME` (after the preflight), so that shards on several machines start together; a time already past starts at once")
	shards := fs.Int("shards", 0, "play the load as `N` leakbench containers on the docker stack's network (--env docker), merged exactly into the run while this process probes (by hand elsewhere: --shard and leakbench merge)")
	otlp := addOTLPFlags(fs)
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in the run directory and reports (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	hist := addHistoryFlags(fs, false)
	defer func() { err = hist.exit(err, args) }()
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench run --variant V --out DIR [flags]\n       leakbench run --target URL --scenario FILE --out DIR [--probe-dsn DSN ...] [flags]\n\nStarts a local PostgreSQL + PgBouncer + reference gateway with the variant, plays the profile's\nload, probes the database, and writes the run directory (summary.json, report.md, samples.jsonl,\nepisodes.jsonl, logs/). With --target it loads your own service instead (any http(s) URL);\nwithout --probe-dsn nothing is probed and the thresholds decide the exit code (99: one failed).\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	probeDSN, err := probeDSNFlag.Value()
	if err != nil {
		return err
	}
	pgbouncerDSN, err := pgbouncerFlag.Value()
	if err != nil {
		return err
	}
	envGiven := false
	fs.Visit(func(f *flag.Flag) { envGiven = envGiven || f.Name == "env" })
	if *target != "" && !envGiven {
		*env = "external" // --target names your own service
	}
	topts, err := tf.options()
	if err != nil {
		return err
	}
	seg, at, err := shardFlags(*shard, *startAt, time.Now()) // shard.go
	if err != nil {
		return err
	}
	switch {
	case *shards < 0:
		return fmt.Errorf("%w: --shards %d: want a number of shard containers, 2 or more", errUsage, *shards)
	case *shards > 1 && *env != "docker":
		return fmt.Errorf("%w: --shards runs the shards as containers of the stack: add --env docker (shards of your own service: --shard i/N --target URL, then leakbench merge)", errUsage)
	case *shards > 1 && !seg.Whole():
		return fmt.Errorf("%w: --shards plays every shard itself; --shard plays one: give one of them", errUsage)
	}
	if !seg.Whole() && *env != "external" {
		// Each run would start a stack of its own: shards of one run load
		// one service.
		return fmt.Errorf("%w: --shard needs --target (the shards of one run load one service)", errUsage)
	}
	if *env != "external" && tf.inUse() {
		return fmt.Errorf("%w: --ca-file, --insecure-skip-verify and --oauth-* belong to --target (your own service)", errUsage)
	}
	ext := runner.External{GatewayURL: *target, GatewayMetricsURL: *metricsURL, ProbeDSN: probeDSN, PgBouncerAdminDSN: pgbouncerDSN, TLS: topts.TLS, FaultLinks: faultLinks}
	// The environment may hold DSNs for other commands; only flags given
	// here decide the mode.
	if *env != "external" && (*target != "" || probeDSNFlag.given() || *tokensFile != "" || len(faultLinks) > 0) {
		return fmt.Errorf("%w: --target, --probe-dsn, --tokens-file and --fault-link belong to --env external", errUsage)
	}
	if *env == "external" {
		if *target == "" {
			return fmt.Errorf("%w: --env external needs --target URL (and a probe DSN, %s, to probe its database)", errUsage, probeDSNFlag.Sources())
		}
		if probeDSN == "" && (pgbouncerDSN != "" || *metricsURL != "") {
			return fmt.Errorf("%w: --pgbouncer-admin-dsn and --metrics-url join the probes, which need a probe DSN (%s)", errUsage, probeDSNFlag.Sources())
		}
		if *tokensFile != "" {
			toks, err := readTokens(*tokensFile)
			if err != nil {
				return err
			}
			ext.Tokens = toks
		}
	}
	p, err := loadProfile(*profile, *scenario)
	if err != nil {
		return err
	}
	if err := overrideVariants(&p, *variant, ""); err != nil {
		return err
	}
	if err := hist.prepare(p.Name, *variant); err != nil {
		return err
	}
	name, runVariant := *variant, *variant
	switch {
	case *env == "external":
		// Your own service: it is named after itself, and the reference
		// gateway's variants do not apply to it.
		name, runVariant = externalName(*runName, *target), ""
	case *runName != "":
		return fmt.Errorf("%w: --name names your own service (--target); a reference run is named after its variant", errUsage)
	}
	tel, err := otlp.start(ctx)
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	sum, err := runner.Run(ctx, runner.Options{Profile: p, Variant: runVariant, Name: name, Dir: *out, Force: *force, Log: os.Stderr, Version: version, Env: *env, External: ext, MetricsAddr: *metricsAddr, KeepQueryText: *keepQueryText, Target: topts, Shard: seg, StartAt: at, Shards: *shards, Telemetry: telemetry(tel)})
	if err != nil {
		return err
	}
	rendered, err := render.Report(*out)
	if err != nil {
		return fmt.Errorf("render reports: %w", err)
	}
	fmt.Println()
	if err := render.WriteSummary(os.Stdout, sum); err != nil {
		return err
	}
	fmt.Printf("\nreport: %s/report.html\n", *out)
	if err := hist.recordRun(ctx, *out, rendered, seg.Whole()); err != nil {
		return err
	}
	if !seg.Whole() {
		// A slice's counts say nothing about the whole's thresholds.
		fmt.Fprintf(os.Stderr, "shard %s: thresholds are judged on the merged result: leakbench merge SHARD_DIR... --out DIR\n", seg)
		return nil
	}
	return loadOnlyVerdict(sum)
}

// readTokens reads bearer tokens, one a line; blank lines and # comments
// are skipped.
func readTokens(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokens file: %w", err)
	}
	var toks []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks = append(toks, line)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("tokens file %s holds no token", path)
	}
	return toks, nil
}

// externalName is what a run against the user's own service is called:
// --name, else the target's host and port (never its credentials, path or
// query, which may carry secrets).
func externalName(name, target string) string {
	if name != "" {
		return name
	}
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		return u.Host
	}
	return "external"
}

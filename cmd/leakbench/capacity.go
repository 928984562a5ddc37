package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/capacity"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// listFlag collects a repeated flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdCapacity(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("capacity")
	ld := addLoadFlags(fs, "capacity", "built-in profile (its capacity: section sets the search): "+strings.Join(profiles.Names(), ", ")) // load.go
	var variants listFlag
	fs.Var(&variants, "variant", "gateway `VARIANT` to search (repeat for two: before, then after; default: the profile's signoff pair); known: "+gateway.VariantNames())
	out := fs.String("out", "", "output directory (required): summary.json, report.md, report.html, junit.xml, plots/, and each stage's run directory")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	env := fs.String("env", "auto", envHelp+"; one stack per variant, for all its stages")
	verbose := fs.Bool("v", false, "print the runs' own progress lines too, not only a line per stage")
	svc := addServiceFlags(c, fs, serviceParts{load: true, name: true}) // service.go

	load := fs.String("load", "", "what the stages step: users (a constant-vus scenario) or rate (a constant-arrival-rate scenario)")
	start := fs.Int("start", 0, "the first stage's load (default: the section's, else 10)")
	maxLoad := fs.Int("max", 0, "the most load the search tries")
	factor := fs.Float64("factor", 0, "each stage's load over the last until one breaks a limit (default 2)")
	resolution := fs.String("resolution", "", "how close the bisection gets: a share of the load (10%) or a load (5)")
	stage := fs.Duration("stage", 0, "how long each stage holds its load (default 10s; at least 3s)")
	maxStages := fs.Int("max-stages", 0, "the most stages the search runs (default 12)")
	minLoad := fs.Int("min", 0, "the load the service must sustain: exit 99 below it (a CI gate: --min 500)")
	stuck := fs.String("stuck-sessions", "", "limit: the most sessions stuck idle in a transaction at once")
	pool := fs.String("pool", "", "limit: exhausted, pinned, any (default) or off")
	errorRate := fs.String("error-rate", "", "limit: the most failed share of requests (0.01 or 1%)")
	var limits listFlag
	fs.Var(&limits, "limit", "limit in the thresholds' syntax, `METRIC:EXPR`: 'mcp_req_duration{name:generate_report}:p(95)<400' (repeat)")
	generator := fs.String("generator", "", "on (default): a stage where leakbench's own generator saturated stops the search as inconclusive; off: only reported")
	otlp := addOTLPFlags(fs)
	wf := addWorkersFlags(fs)       // workers.go
	sizeFlags := addSizingFlags(fs) // sizing.go
	// dashboard.go; dashviews.go
	dash := addDashboardFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench capacity [--variant V [--variant V2]] --out DIR [flags]
       leakbench capacity --target URL --scenario FILE --out DIR [--probe-dsn DSN ...] [flags]

Finds the largest load the service holds every limit at. Steps the load (users, or an
arrival rate) up by --factor, each stage held for --stage, until a limit trips — stuck
sessions, the pool exhausted or pinned, the error rate, latency thresholds — then bisects
between the last stage that held and the first that broke to --resolution. A stage where
the generator saturated, or whose load was still climbing at its end, stops the search as
inconclusive (exit 1): no capacity is reported that was not measured.

A variant gets one local stack for all its stages; each stage's run directory is kept under
--out (stage-01-users-10/, …). Writes summary.json (its capacity section), report.md,
report.html, junit.xml and plots/capacity.png|svg. With two variants, says how the
capacity changed ("commit-in-finally → fixed raised capacity from 12 to 40 users, 3.3×").
--target-rate and --replicas size every stage's pool for that rate and number of instances
(the Sizing section; the search's is the knee's).
Exit codes: 0 found (and --min met), 99 below --min, 1 inconclusive or could not be done.

The profile's capacity: section sets the search; flags override it:

  capacity:
    load: users
    start: 10
    max: 400
    stage: 8s
    resolution: 10%%
    stuck_sessions: 0
    pool: exhausted
    error_rate: 0.01
    thresholds:
      mcp_req_duration{name:generate_report}: ["p(95)<400"]

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	sizeOpts, sizeGiven, err := sizeFlags.options()
	if err != nil {
		return err
	}
	p, err := ld.load()
	if err != nil {
		return err
	}
	sec := &p.Capacity
	setStr(&sec.Load, *load)
	setInt(&sec.Start, *start)
	setInt(&sec.Max, *maxLoad)
	setInt(&sec.MaxStages, *maxStages)
	setInt(&sec.Min, *minLoad)
	setStr(&sec.Resolution, *resolution)
	setStr(&sec.StuckSessions, *stuck)
	setStr(&sec.Pool, *pool)
	setStr(&sec.ErrorRate, *errorRate)
	setStr(&sec.Generator, *generator)
	if *factor != 0 {
		sec.Factor = *factor
	}
	if *stage != 0 {
		sec.Stage = *stage
	}
	for _, l := range limits {
		metric, expr, ok := splitLimit(l)
		if !ok {
			return fmt.Errorf("%w: --limit %q: want METRIC:EXPR, e.g. 'mcp_req_duration{method:tools/call}:p(95)<500'", cliflag.ErrUsage, l)
		}
		if sec.Thresholds == nil {
			sec.Thresholds = map[string][]string{}
		}
		sec.Thresholds[metric] = append(sec.Thresholds[metric], expr)
	}
	spec, err := capacity.Resolve(*sec, p.Plan)
	if err != nil {
		return err
	}
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	wcfg, err := wf.config()
	if err != nil {
		return err
	}
	o := capacity.Options{Profile: p, Spec: spec, Env: *env, Out: *out, Force: *force, Log: c.progress(), Verbose: *verbose, Version: version, Telemetry: telemetry(tel), Workers: wcfg, Sizing: sizeOpts}
	if svc.Target != "" {
		if len(variants) > 0 {
			return fmt.Errorf("%w: --target searches your own service; --variant the reference gateway's: give one of them", cliflag.ErrUsage)
		}
		topts, err := svc.Conn.Options()
		if err != nil {
			return err
		}
		ext, err := svc.External(topts)
		if err != nil {
			return err
		}
		if sizeGiven && ext.ProbeDSN == "" && ext.PostgresDSN == "" {
			return fmt.Errorf("%w: --target-rate and --replicas size the pool from the database's view: give a probe DSN (%s)", cliflag.ErrUsage, svc.ProbeDSN.Sources())
		}
		o.Target, o.Name, o.TargetOptions = &ext, svc.RunName(), topts
	} else {
		if err := svc.RefuseWithout("--target"); err != nil {
			return err
		}
		if len(variants) == 0 {
			variants = listFlag{p.VariantBefore, p.VariantAfter}
		}
		for _, v := range variants {
			if _, err := gateway.ParseVariants(v); err != nil {
				return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
			}
		}
		o.Variants = variants
	}
	_, err = dash.searchCapacity(ctx, c, o)
	return workersExit(err)
}

// searchCapacity runs the search, prints each search's headline and the
// change between them, and maps a capacity below --min to exit 99. The
// summary is what was measured, also with the error (nil: nothing was).
func searchCapacity(ctx context.Context, c *cli, o capacity.Options) (*capreport.Summary, error) {
	sum, err := capacity.Run(ctx, o)
	if sum != nil {
		fmt.Fprintln(c.tables())
		for _, s := range sum.Capacity.Searches {
			fmt.Fprintln(c.stdout, s.Headline())
		}
		if ch := sum.Capacity.Change; ch != nil {
			fmt.Fprintln(c.stdout, ch.Line)
		}
		fmt.Fprintf(c.stdout, "\ncapacity report: %s/report.html\n", o.Out)
	}
	if errors.Is(err, capacity.ErrBelowMin) {
		return sum, fmt.Errorf("%w: %w", errVerdict, err)
	}
	return sum, err
}

// splitLimit splits METRIC:EXPR at the colon after the metric and its
// {tag:value} filter, if any.
func splitLimit(s string) (metric, expr string, ok bool) {
	from := 0
	if i := strings.Index(s, "}"); i >= 0 {
		from = i
	}
	i := strings.Index(s[from:], ":")
	if i < 0 {
		return "", "", false
	}
	metric, expr = strings.TrimSpace(s[:from+i]), strings.TrimSpace(s[from+i+1:])
	if metric == "" || expr == "" {
		return "", "", false
	}
	return metric, expr, true
}

func setStr(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setInt(dst *int, v int) {
	if v != 0 {
		*dst = v
	}
}

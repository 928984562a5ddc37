package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/ownservice"
	"github.com/leakbench/leakbench/internal/app/soak"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// slopeFlags are soak's repeatable --slope KIND=PERHOUR.
type slopeFlags map[string]float64

func (s slopeFlags) String() string { return "" }

func (s slopeFlags) Set(v string) error {
	k, n, ok := strings.Cut(v, "=")
	f, err := strconv.ParseFloat(n, 64)
	if !ok || err != nil || f < 0 {
		return fmt.Errorf("want KIND=PERHOUR (a number ≥ 0), got %q", v)
	}
	s[k] = f
	return nil
}

func cmdSoak(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("soak")
	ld := addLoadFlags(fs, "soak", "built-in profile whose constant load to hold", "vus", "duration") // load.go
	variant := fs.String("variant", "commit-in-finally-rare", "gateway variant to soak")
	out := fs.String("out", "", "run directory (required)")
	force := fs.Bool("force", false, "replace an earlier run in --out that leakbench wrote")
	env := fs.String("env", "auto", envHelp+" (--target soaks your own service instead)")
	svc := addServiceFlags(c, fs, serviceParts{load: true}) // service.go; a soak's run is named soak
	baseline := fs.Duration("baseline", 10*time.Second, "how long the probes sample before the load")
	warmup := fs.Duration("warmup", 30*time.Second, "start of the load left out of the fit")
	coolDown := fs.Duration("cool-down", 30*time.Second, "how long the probes sample after the load, with none (0: the soak is not judged)")
	minPoints := fs.Int("min-points", 30, "fewest one-second points of the steady window a resource needs to be judged")
	minR2 := fs.Float64("min-r2", 0.5, "least R² of a fit for its slope to count as growth")
	otlp := addOTLPFlags(fs)
	wf := addWorkersFlags(fs) // workers.go
	// dashboard.go; dashviews.go
	dash := addDashboardFlags(fs)
	slopes := slopeFlags{}
	fs.Var(slopes, "slope", "growth threshold `KIND=PERHOUR`, repeatable; kinds: connections, idle_in_tx, stuck, sv_active, cl_waiting, pool_acquired, unclosed_sessions, rss_bytes, open_fds, goroutines")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench soak --out DIR [--profile soak | --scenario FILE] [--variant V] [--env auto|docker|local]
                      [--baseline D] [--warmup D] [--cool-down D] [--slope KIND=PERHOUR]...
       leakbench soak --target URL --probe-dsn DSN --scenario FILE --out DIR [flags]

Holds a profile's constant load on a fresh stack for the plan's duration, after a baseline with
no load, then lets the probes sample through a cool-down with no load. Over the steady window
(the warm-up left out) it fits a line to each resource — the service's connections held (working
or in a transaction, per application, as the database sees them), idle-in-transaction and stuck
sessions, PgBouncer sv_active and cl_waiting, the service pool's acquired connections and
unclosed sessions, the service's resident memory, open file descriptors and goroutines (its
/metrics) — and says per resource "growing: +37 connections/hour (R² 0.96), not recovered in
cool-down", "recovered", "flat" or "not judged" (too few points, never sampled, no cool-down),
with the culprits of what accumulated. Writes summary.json (soak), report.md, report.html and
plots/soak.png|svg into --out. leakbench's own resident memory is fitted too, and reported.

Exit: 0 flat, 99 growing or not judged, 1 the soak could not be run, 130 interrupted.

`)
		printFlags(fs.Output(), fs)
	}
	pos, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("%w: leakbench soak takes no positional arguments (got %q)", cliflag.ErrUsage, pos)
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	if *baseline < 0 || *warmup < 0 || *coolDown < 0 || *minPoints < 2 || *minR2 < 0 || *minR2 > 1 {
		return fmt.Errorf("%w: want --baseline, --warmup, --cool-down ≥ 0, --min-points ≥ 2 and 0 ≤ --min-r2 ≤ 1", cliflag.ErrUsage)
	}
	wcfg, err := wf.config()
	if err != nil {
		return err
	}
	o := soak.Options{Variant: *variant, Dir: *out, Force: *force, Env: *env, Log: c.progress(), Version: version, Workers: wcfg}
	if err := soakTarget(fs, svc, &o); err != nil {
		return err
	}
	p, err := ld.load()
	if err != nil {
		return err
	}
	set, err := soakSettings(fs, p.Soak, soakFlags{baseline, warmup, coolDown, minPoints, minR2, slopes})
	if err != nil {
		return err
	}
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	o.Profile, o.Settings, o.Telemetry = p, set, telemetry(tel)
	_, err = dash.runSoak(ctx, c, o)
	if errors.Is(err, soak.ErrGrowing) || errors.Is(err, soak.ErrNotJudged) {
		return fmt.Errorf("%w: %w (see %s/report.md)", errVerdict, err, *out)
	}
	return workersExit(err)
}

// soakTarget points the soak at the user's own service when --target is
// given (Env external, no variant). A soak is judged on the probes, so it
// needs a probe DSN there.
func soakTarget(fs *flag.FlagSet, svc *ownservice.Service, o *soak.Options) error {
	if svc.Target == "" {
		return svc.RefuseWithout("--target")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case given["variant"]:
		return fmt.Errorf("%w: --target soaks your own service; --variant the reference gateway's: give one of them", cliflag.ErrUsage)
	case given["env"] && o.Env != "external":
		return fmt.Errorf("%w: --target soaks your own service (--env external), not a stack of --env %s", cliflag.ErrUsage, o.Env)
	}
	topts, err := svc.Conn.Options()
	if err != nil {
		return err
	}
	ext, err := svc.External(topts)
	if err != nil {
		return err
	}
	if ext.ProbeDSN == "" {
		return fmt.Errorf("%w: a soak is judged on the probes: --target needs a probe DSN (%s)", cliflag.ErrUsage, svc.ProbeDSN.Sources())
	}
	o.Env, o.External, o.Target, o.Variant = "external", ext, topts, ""
	return nil
}

// soakFlags are soak's setting flags, as parsed.
type soakFlags struct {
	baseline, warmup, coolDown *time.Duration
	minPoints                  *int
	minR2                      *float64
	slopes                     slopeFlags
}

// soakSettings are the soak's settings: the profile's soak: section, then
// the flags the user gave (fs says which); what neither sets takes the
// flags' defaults.
func soakSettings(fs *flag.FlagSet, set rundir.SoakSettings, f soakFlags) (rundir.SoakSettings, error) {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	pick := func(name string, fromProfile bool) bool { return given[name] || !fromProfile }
	if pick("baseline", set.Baseline != 0) {
		set.Baseline = *f.baseline
		if *f.baseline == 0 {
			set.Baseline = time.Nanosecond // the flag's 0: no baseline, not the default
		}
	}
	if pick("warmup", set.Warmup != 0) {
		set.Warmup = *f.warmup
	}
	if pick("cool-down", set.CoolDown != 0) {
		set.CoolDown = *f.coolDown
	}
	if pick("min-points", set.MinPoints != 0) {
		set.MinPoints = *f.minPoints
	}
	if pick("min-r2", set.MinR2 != 0) {
		set.MinR2 = *f.minR2
	}
	slopes := map[string]float64{}
	for k, v := range set.Slopes {
		slopes[k] = v
	}
	for k, v := range f.slopes {
		slopes[k] = v
	}
	set.Slopes = slopes
	for k := range set.Slopes {
		if !slices.Contains(soak.SlopeKinds(), k) {
			return set, fmt.Errorf("%w: a slope threshold for %q, which is no resource kind; kinds: %s", cliflag.ErrUsage, k, strings.Join(soak.SlopeKinds(), ", "))
		}
	}
	if set.Baseline < 0 || set.Warmup < 0 || set.CoolDown < 0 || set.MinPoints < 2 || set.MinR2 < 0 || set.MinR2 > 1 {
		return set, fmt.Errorf("%w: the soak wants baseline, warmup, cool_down ≥ 0, min_points ≥ 2 and 0 ≤ min_r2 ≤ 1", cliflag.ErrUsage)
	}
	return set, nil
}

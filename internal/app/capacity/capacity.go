package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/sizing"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// Sentinel outcomes a caller turns into exit codes.
var (
	// ErrBelowMin: the search found a capacity below the required Min.
	ErrBelowMin = errors.New("capacity below the required minimum")
	// ErrInconclusive: a search stopped before its answer for a reason
	// that is not the service's (see capreport.Inconclusive).
	ErrInconclusive = errors.New("capacity search inconclusive")
)

// Options configures a capacity search.
type Options struct {
	Profile profiles.Profile
	Spec    Spec
	// Variants are the reference gateway's variants to search, each on a
	// stack of its own, in order (two: before and after); none with
	// Target.
	Variants []string
	// Env is where a variant's stack runs: local (default) or docker.
	Env string
	// Target is the user's own service (its GatewayURL set), with Name
	// its name in the reports; TargetOptions its TLS and OAuth.
	Target        *fixtures.External
	Name          string
	TargetOptions runner.TargetOptions
	// Out is the output directory: summary.json, reports and the
	// stages' run directories.
	Out   string
	Force bool
	// Log receives a line per stage as it starts and as it ends; Verbose
	// adds the runs' own progress lines.
	Log     io.Writer
	Verbose bool
	Version string
	// Telemetry, if set, exports every stage over OTLP as a run of its
	// own (runner.Options.Telemetry), named "VARIANT stage N".
	Telemetry runner.Telemetry
	// Workers plays every stage's load as worker processes
	// (runner.Options.Workers), at most one per user of the stage.
	Workers workers.Config
	// Sizing sizes every probed stage's pool for a target rate and a
	// number of replicas (--target-rate, --replicas); left zero, each
	// stage is sized for the highest rate it saw, and the checks say how
	// many replicas fit. The search's sizing is its knee's.
	Sizing sizing.Options
	Watch  Watch // watch.go: the dashboard, if any
}

// sizingGiven says whether a target rate or replicas were given: only
// then is a stage sized again after it is rendered.
func (o Options) sizingGiven() bool { return o.Sizing.TargetRate != nil || o.Sizing.Replicas != nil }

// Run searches every variant (or the target) and writes the output
// directory. The summary is returned with the error when the search could
// not be done, or ErrInconclusive, or ErrBelowMin.
func Run(ctx context.Context, o Options) (*capreport.Summary, error) {
	if (len(o.Variants) == 0) == (o.Target == nil) {
		return nil, fmt.Errorf("%w: give the variants to search or a target, one of them", ErrSpec)
	}
	if len(o.Variants) > 2 {
		return nil, fmt.Errorf("%w: at most two variants (before and after), got %d", ErrSpec, len(o.Variants))
	}
	if err := reach(o.Spec); err != nil {
		return nil, err
	}
	if err := o.Sizing.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	if o.sizingGiven() && o.Target != nil && o.Target.ProbeDSN == "" && o.Target.PostgresDSN == "" {
		return nil, fmt.Errorf("%w: a target rate and replicas size the pool from the database's view: give the target a probe DSN", ErrSpec)
	}
	if o.Workers.On() && o.Target == nil && orStr(o.Env, fixtures.ProviderLocal) == fixtures.ProviderLocal {
		return nil, fmt.Errorf("%w: --workers: --env local runs the reference gateway inside this leakbench process, which would share the workers' machine limits and processors; give --env docker or --target", workers.ErrBadInput)
	}
	if err := rundir.Prepare(o.Out, o.Force); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	sum := &capreport.Summary{Started: time.Now().UTC()}
	write := func() error {
		sum.Ended = time.Now().UTC()
		sum.Capacity.Change = change(sum.Capacity.Searches)
		sum.Capacity.SizingChange = capreport.CompareSizing(sum.Capacity.Searches)
		return capreport.Write(o.Out, sum)
	}
	var runErr error
	if o.Target != nil {
		s, err := searchOne(ctx, o, "", *o.Target, "")
		sum.Capacity.Searches = append(sum.Capacity.Searches, s)
		runErr = err
	}
	for _, v := range o.Variants {
		sub := ""
		if len(o.Variants) > 1 {
			sub = v
		}
		s, err := searchVariant(ctx, o, v, sub)
		sum.Capacity.Searches = append(sum.Capacity.Searches, s)
		if err != nil {
			runErr = err
			break
		}
	}
	if err := write(); err != nil {
		return sum, errors.Join(runErr, err)
	}
	if runErr != nil {
		return sum, runErr
	}
	return sum, verdict(sum)
}

// verdict is the searches' outcome as an error: ErrInconclusive for one
// that stopped short (it says why), ErrBelowMin for one under Min.
func verdict(sum *capreport.Summary) error {
	var errs []error
	for _, s := range sum.Capacity.Searches {
		switch {
		case s.MinPass != nil && !*s.MinPass:
			errs = append(errs, fmt.Errorf("%w: %s; required %d %s", ErrBelowMin, s.Headline(), s.Min, s.Unit))
		case s.Outcome == capreport.Inconclusive && s.MinPass == nil:
			errs = append(errs, fmt.Errorf("%w: %s", ErrInconclusive, s.Headline()))
		}
	}
	return errors.Join(errs...)
}

// reach refuses a Min the search cannot reach in its stages.
func reach(s Spec) error {
	if s.Min == 0 {
		return nil
	}
	top := float64(s.Start) * math.Pow(s.Factor, float64(s.MaxStages-1))
	if top < float64(s.Min) {
		return fmt.Errorf("%w: --min %d cannot be reached: from %d, ×%g a stage, %d stages reach at most %.0f; raise --start, --factor or --max-stages",
			ErrSpec, s.Min, s.Start, s.Factor, s.MaxStages, top)
	}
	return nil
}

// searchVariant starts a stack with the variant, searches it and stops
// the stack.
func searchVariant(ctx context.Context, o Options, variant, sub string) (s capreport.Search, err error) {
	dir := filepath.Join(o.Out, sub)
	// A variant's own folder (two variants: one each; one variant uses
	// Out itself) is marked as leakbench's, as Out is, so that --force
	// clears it next time instead of refusing it as someone else's.
	if sub != "" {
		if err := rundir.Prepare(dir, false); err != nil {
			return s, fmt.Errorf("capacity: %w", err)
		}
	}
	cfg := o.Profile.Stack
	cfg.Variant = variant
	cfg.LogDir = filepath.Join(dir, "stack-logs")
	fmt.Fprintf(o.Log, "[%s] starting PostgreSQL, PgBouncer and the %s gateway (%s) for the whole search…\n", variant, variant, orStr(o.Env, fixtures.ProviderLocal))
	env, err := fixtures.Start(ctx, cfg, fixtures.StartOptions{Provider: orStr(o.Env, fixtures.ProviderLocal), Log: o.logw(variant)})
	defer func() {
		if cerr := env.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stop the %s stack: %w", variant, cerr))
		}
	}()
	if err != nil {
		s = capreport.Search{Name: variant, Variant: variant, Outcome: capreport.Inconclusive, Reason: "the stack did not start"}
		return s, interrupted(ctx, fmt.Errorf("capacity %s: start the stack: %w", variant, err))
	}
	ext := fixtures.External{GatewayURL: env.GatewayURL, GatewayMetricsURL: env.GatewayMetricsURL, UpstreamURL: env.UpstreamURL,
		ProbeDSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN, Tokens: env.Tokens}
	return searchOne(ctx, o, variant, ext, sub)
}

func (o Options) logw(name string) io.Writer {
	if !o.Verbose {
		return nil
	}
	return prefixWriter(o.Log, "["+name+"] ")
}

// searchOne runs the stages of one search against ext.
func searchOne(ctx context.Context, o Options, variant string, ext fixtures.External, sub string) (capreport.Search, error) {
	sp := o.Spec
	name := variant
	if name == "" {
		name = orStr(o.Name, "target")
	}
	probed := ext.ProbeDSN != ""
	res := capreport.Search{Name: name, Variant: variant, Load: sp.Load, Unit: sp.Unit(o.Profile.Plan),
		Resolution: sp.Resolution, Limits: sp.Limits(probed), Min: sp.Min, Dir: sub}
	if variant == "" {
		res.Target = redact.URL(ext.GatewayURL)
	}
	se := newSearch(sp)
	var runErr error
	for i := 1; ; i++ {
		load, ok := se.Next()
		if !ok {
			break
		}
		st, err := runStage(ctx, o, ext, name, sub, i, load)
		res.Stages = append(res.Stages, st)
		o.Watch.judged(res)
		if err != nil {
			runErr = err
			res.Reason = fmt.Sprintf("stage %d (%d %s) could not be judged: %v", i, load, res.Unit, redact.String(err.Error()))
			break
		}
		if st.Inconclusive != "" {
			res.Reason = fmt.Sprintf("stage %d (%d %s): %s — no capacity is reported beyond what earlier stages held", i, load, res.Unit, st.Inconclusive)
			break
		}
		se.Record(load, st.Held)
	}
	conclude(&res, se)
	o.Watch.judged(res)
	fmt.Fprintf(o.Log, "[%s] %s\n", name, res.Headline())
	return res, runErr
}

// conclude sets the search's outcome from its stages.
func conclude(res *capreport.Search, se *search) {
	res.Capacity, res.FirstBad = se.good, se.bad
	res.Resolved = se.Resolved() && res.Reason == ""
	switch {
	case res.Reason != "":
		res.Outcome = capreport.Inconclusive
	case se.bad == 0 && se.good >= se.spec.Max:
		res.Outcome = capreport.AboveMax
	case se.bad == 0:
		res.Outcome = capreport.Inconclusive
		res.Reason = fmt.Sprintf("out of stages (%d) before any limit tripped", len(res.Stages))
	case se.good == 0:
		res.Outcome = capreport.BelowStart
	default:
		res.Outcome = capreport.Found
	}
	for _, st := range res.Stages {
		if st.Load == se.bad && len(st.Trips) > 0 {
			res.Limit, res.Detail, res.Resource, res.LimitAtSeconds = st.Trips[0].Limit, st.Trips[0].Detail, st.Trips[0].Resource, st.Trips[0].AtSeconds
			res.LimitTiedWith = capreport.TiedWithFirst(st.Trips)
		}
	}
	res.SizeAtKnee()
	if res.Min > 0 {
		pass := res.Capacity >= res.Min
		if pass || res.Outcome != capreport.Inconclusive {
			res.MinPass = &pass
		}
	}
}

// change compares two searches that both found a capacity.
func change(ss []capreport.Search) *capreport.Change {
	if len(ss) != 2 || ss[0].Capacity == 0 || ss[1].Capacity == 0 || ss[0].Outcome == capreport.Inconclusive || ss[1].Outcome == capreport.Inconclusive {
		return nil
	}
	b, a := ss[0], ss[1]
	c := &capreport.Change{Before: b.Name, After: a.Name, From: b.Capacity, To: a.Capacity, Unit: a.Unit,
		Ratio: math.Round(float64(a.Capacity)/float64(b.Capacity)*10) / 10}
	// A search that held up to its max measured a lower bound, not a
	// capacity: the line says so, and never a change it did not see.
	bound := func(s capreport.Search) string {
		if s.Outcome == capreport.AboveMax {
			return "at least "
		}
		return ""
	}
	bMax, aMax := b.Outcome == capreport.AboveMax, a.Outcome == capreport.AboveMax
	switch {
	case bMax && aMax:
		c.Line = fmt.Sprintf("%s → %s: both held every limit up to the search's max (%d and %d %s): no change measured; raise max to tell them apart",
			b.Name, a.Name, b.Capacity, a.Capacity, a.Unit)
	case bMax && a.Capacity >= b.Capacity:
		c.Line = fmt.Sprintf("%s → %s: before held up to the search's max (%d %s), after %d: no change measured; raise max", b.Name, a.Name, b.Capacity, a.Unit, a.Capacity)
	case a.Capacity == b.Capacity:
		c.Line = fmt.Sprintf("%s → %s left capacity at %s%d %s", b.Name, a.Name, bound(a), a.Capacity, a.Unit)
	default:
		verb := "raised"
		if a.Capacity < b.Capacity {
			verb = "lowered"
		}
		c.Line = fmt.Sprintf("%s → %s %s capacity from %s%d to %s%d %s, %.1f×", b.Name, a.Name, verb, bound(b), b.Capacity, bound(a), a.Capacity, a.Unit, c.Ratio)
	}
	c.Hold = capreport.HoldChange(&b, &a)
	return c
}

func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return runner.ErrInterrupted
	}
	return err
}

package runner

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// Worker processes (Options.Workers, leakbench run --workers N|auto): the
// load is played by that many processes of this binary on this machine,
// one processor each, merged exactly into the run while this process
// probes the database as in any run (package workers).

// checkWorkers refuses what workers cannot do, and lays the load out
// over them before anything starts: a plan that does not fit this
// machine's open files and local ports is refused with the numbers
// (workers.ErrBadInput). The target is a guess until the stack is up:
// the stacks leakbench starts serve on loopback.
func (o *Options) checkWorkers() error {
	w := o.Workers
	if !w.On() && len(w.SourceAddrs) == 0 {
		return o.checkBudgetInProcess()
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", workers.ErrBadInput, fmt.Sprintf(format, args...))
	}
	if w.On() {
		switch {
		case o.Env == fixtures.ProviderLocal:
			return bad("--workers: --env local runs the reference gateway inside this leakbench process, so the workers would load a server that shares this process's file limit and processors — the limits workers exist to get past, and a measure of the engine no longer its own; use --env docker or your own service (--target)")
		case o.Shards > 1:
			return bad("--workers plays the load as processes on this machine, --shards as containers of the stack: give one of them")
		case !o.Shard.Whole():
			return bad("--workers with --shard: a shard is not split into workers yet; give one of them")
		case o.Target.TLS != nil && o.Target.CAFile == "" && !o.Target.Insecure:
			// A caller that built its own tls.Config: the workers could
			// only guess at it.
			return bad("--workers: the target's TLS settings were given as a configuration, not as --ca-file or --insecure-skip-verify, and a worker process cannot be given one; run without --workers")
		}
	}
	if o.Profile.Plan == nil {
		return bad("--workers and --source-addrs need a plan to play")
	}
	l, err := workers.ReadLimits()
	if err != nil {
		return err
	}
	lay, err := workers.NewLayout(o.Profile.Plan, w, o.guessTarget(), l)
	if err != nil {
		return err
	}
	o.layout = lay
	return nil
}

// checkBudgetInProcess refuses, before anything starts, a plan whose
// connections one process cannot open (its open-file limit), with the
// numbers and --workers as the way out. Not for --env local, whose
// gateway in this process holds the other end of every connection, nor
// for a shard's slice; a plan that does not compile is the engine's to
// report.
func (o *Options) checkBudgetInProcess() error {
	if o.Profile.Plan == nil || o.Env == fixtures.ProviderLocal || !o.Shard.Whole() || o.Shards > 1 {
		return nil
	}
	cp, err := plan.Compile(o.Profile.Plan)
	if err != nil {
		return nil
	}
	l, err := workers.ReadLimits()
	if err != nil {
		return nil
	}
	return workers.CheckBudget(workers.Needs(cp, 1), workers.Sources{PerWorker: [][]netip.Addr{nil}}, l)
}

// guessTarget is where the load will go, as far as it is known before the
// stack starts.
func (o *Options) guessTarget() string {
	if o.Env == "external" {
		return o.External.GatewayURL
	}
	return "http://127.0.0.1/"
}

// workersOnStack lays the load out again against the started stack's
// gateway, whose address is now known.
func (o *Options) workersOnStack(env *fixtures.Env) error {
	if o.layout == nil {
		return nil
	}
	if o.Workers.On() && env.Provider == fixtures.ProviderLocal {
		return fmt.Errorf("%w: --workers: --env auto started the local stack, whose reference gateway runs inside this leakbench process (it would share the workers' machine limits and processors); give --env docker or --target", workers.ErrBadInput)
	}
	lay, err := workers.NewLayout(o.Profile.Plan, o.Workers, env.GatewayURL, o.layout.Limits)
	if err != nil {
		return err
	}
	o.layout = lay
	return nil
}

// inProcessSources are the source addresses of a load played in this
// process (--source-addrs without --workers).
func (o *Options) inProcessSources() []netip.Addr {
	if o.layout == nil {
		return nil
	}
	return o.layout.Sources.PerWorker[0]
}

// playWorkers plays o's load as worker processes against env's gateway,
// merged into o.Dir; sum records the workers, also when one died.
// The live metrics (--metrics-addr) are the workers' merged, gatherer's
// beside them (the probe's; nil: none).
func playWorkers(ctx context.Context, o Options, env *fixtures.Env, sum *rundir.Summary, logw, progress io.Writer, gatherer prometheus.Gatherer) (*rundir.LoadResult, error) {
	p, err := withDataPaths(o.Profile.Plan)
	if err != nil {
		return nil, err
	}
	// Not the plan's JSON, which masks credential headers: the workers
	// must send them as written (shardplan.go). It goes to their standard
	// input only.
	raw, err := shardPlan(p)
	if err != nil {
		return nil, err
	}
	if !sum.Environment.LoadOnly { // a load-only run said it already
		fmt.Fprintf(logw, "[%s] load: %s against %s\n", o.Name, p.Describe(), redact.URL(env.GatewayURL))
	}
	// --otlp-*: the workers' requests reach the collector from the merged
	// requests.jsonl once the run is written (Telemetry.RunWritten
	// replays a run that sent no span live), as a sharded run's do.
	cmd := o.WorkerCommand
	if cmd == nil {
		cmd = workers.Self
	}
	var tlsSet *workers.TLSSettings
	if o.Target.CAFile != "" || o.Target.Insecure {
		tlsSet = &workers.TLSSettings{CAFile: o.Target.CAFile, Insecure: o.Target.Insecure}
	}
	res, rec, err := workers.Play(ctx, workers.Options{Command: cmd, Layout: o.layout, PlanJSON: raw, Target: env.GatewayURL,
		Tokens: env.Tokens, TLS: tlsSet, OAuth: workers.NewOAuthSettings(o.Target.OAuth), Dir: o.Dir, MaxDuration: planLength(p), Log: prefixed(logw, "["+o.Name+"] "), Progress: progress,
		MetricsAddr: o.MetricsAddr, Gatherer: gatherer})
	sum.Workers = rec
	return res, err
}

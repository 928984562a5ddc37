package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/faultplay"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/faults"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// ErrInterrupted is returned when the run's context was cancelled (Ctrl-C);
// the run directory is still complete and says so.
var ErrInterrupted = errors.New("run interrupted")

// Options configures one run.
type Options struct {
	Profile profiles.Profile
	// Variant is the gateway variant to start.
	Variant string
	// Name labels the run in reports ("before", "after").
	Name string
	// Dir is the run directory; it must not already hold a run unless Force.
	Dir   string
	Force bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Version is leakbench's version, recorded in the summary.
	Version string
	// Env is the stack's provider: auto (docker when an engine answers,
	// else local), docker, local or external.
	Env string
	// External are the user's endpoints for Env "external".
	External fixtures.External
	// MetricsAddr, if set, serves the engine's and the probe's live
	// Prometheus metrics at /metrics on this address while the load runs.
	MetricsAddr string
	// Target has the engine's connection settings for the user's own
	// service: TLS and OAuth (never serialized).
	Target TargetOptions
	// KeepQueryText keeps the raw query texts of stuck sessions in the run
	// directory and reports instead of masking their literals. Sensitive:
	// see probes.Config.KeepQueryText.
	KeepQueryText bool
	// Shard is the slice of the plan this run plays (the whole plan when
	// zero), StartAt when its load starts (zero: at once); see
	// engine.RunOptions.
	Shard   plan.Segment
	StartAt time.Time
	// Shards > 1 plays the load as that many leakbench containers on the
	// docker stack's network, merged into this run (dockershards.go);
	// docker provider only.
	Shards int
	// Soak, when set, makes the run a soak's (soakhooks.go): a baseline
	// before the load, a cool-down of fixed length after it.
	Soak *SoakHooks
	// Telemetry, if set, exports the run over OTLP (telemetry.go): the
	// engine's requests as they end, the episodes and key figures after.
	Telemetry Telemetry
	// Watch, if set, follows the run live (watch.go): a dashboard.
	Watch Watch
	// Workers, when on, plays the load as worker processes on this
	// machine (workers.go; leakbench run --workers N|auto); its
	// SourceAddrs (--source-addrs) also apply to a load played here.
	Workers workers.Config
	// WorkerCommand starts one worker (nil: this binary's hidden
	// `leakbench worker`); tests give their own.
	WorkerCommand func() *exec.Cmd
	// layout is the load laid out over the workers (checkWorkers).
	layout *workers.Layout
}

// Run starts a stack with the variant, probes it while the load plays, lets
// the probes watch for Profile.Drain after the load, and writes the run
// directory. A summary is written on every path once the directory exists,
// with EndReason saying how the run ended.
func Run(ctx context.Context, o Options) (sum *rundir.Summary, err error) {
	if o.Shards > 1 && o.Env != fixtures.ProviderDocker {
		return nil, fmt.Errorf("--shards %d runs the shards as containers of the stack: it needs --env docker, not %s", o.Shards, orDefault(o.Env, "auto"))
	}
	if err := o.checkWorkers(); err != nil {
		return nil, err
	}
	if err := rundir.Prepare(o.Dir, o.Force); err != nil {
		return nil, err
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	p := o.Profile
	// The plan's warnings (a step that fails on some servers) come before
	// anything starts, so a user sees them even if the run then fails.
	if p.Plan != nil {
		for _, w := range p.Plan.Warnings() {
			fmt.Fprintf(logw, "[%s] warning: %s\n", o.Name, w)
		}
	}
	stackCfg := p.Stack
	stackCfg.Variant = o.Variant
	stackCfg.LogDir = filepath.Join(o.Dir, "logs")
	stackCfg.FaultLinks = faults.Links(p.Faults) // the links the faults: timeline uses; none: no proxy
	stackCfg.RestartServers = slices.ContainsFunc(p.Faults, func(s faults.Spec) bool { return s.Server() != "" })
	var dbAddr string // the probed PostgreSQL's host:port, for the episodes' spans
	sum = &rundir.Summary{Name: o.Name, Profile: p.Name, Started: time.Now().UTC(), EndReason: rundir.EndFailed,
		Environment: rundir.Environment{Provider: orDefault(o.Env, "local"), Variant: o.Variant, LeakbenchVersion: o.Version}}
	defer func() {
		sum.Ended = time.Now().UTC()
		if err != nil {
			sum.Error = redact.String(err.Error())
			if errors.Is(err, ErrInterrupted) {
				sum.EndReason = rundir.EndInterrupted
			}
		} else {
			sum.EndReason = rundir.EndCompleted
		}
		werr := reports.WriteRun(o.Dir, sum)
		if werr == nil && o.Telemetry != nil {
			// The written run's episodes and figures go out, and
			// summary.json gets what was delivered (telemetry.go).
			o.Telemetry.RunWritten(ctx, o.Dir, sum, dbAddr, logw)
			werr = reports.WriteRun(o.Dir, sum)
		}
		if werr != nil {
			err = errors.Join(err, werr)
		}
	}()
	if err := writeConfig(o.Dir, o, stackCfg); err != nil {
		return sum, err
	}

	if o.Env == "external" {
		fmt.Fprintf(logw, "[%s] attaching to the external stack…\n", o.Name)
	} else {
		fmt.Fprintf(logw, "[%s] starting PostgreSQL, PgBouncer and the %s gateway (%s)…\n", o.Name, o.Variant, orDefault(o.Env, "local"))
	}
	env, err := fixtures.Start(ctx, stackCfg, fixtures.StartOptions{Provider: o.Env, External: o.External, Log: prefixed(logw, "["+o.Name+"] ")})
	defer func() {
		if cerr := env.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stop stack: %w", cerr))
		}
	}()
	if err != nil {
		return sum, interrupted(ctx, fmt.Errorf("start stack: %w", err))
	}
	fillEnvironment(&sum.Environment, env)
	dbAddr = probedAddr(env)
	if err := o.workersOnStack(env); err != nil {
		return sum, err
	}

	if env.ProbeDSN == "" {
		return runLoadOnly(ctx, o, sum, env, logw)
	}
	poller, err := probes.Start(ctx, probes.Config{
		DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN, Database: env.Database,
		Interval: p.Probe.Interval, StuckAfter: p.Probe.StuckAfter, RunDir: o.Dir,
		Scrape: scrapeTargets(env), KeepQueryText: o.KeepQueryText,
		// The tokens the users send: a stuck session whose query carries
		// one as a literal names its users (services that bind on the
		// client), where no trace context does.
		SentTokens: sentTokens(env, p),
		// The server's own record of the backends it killed makes those
		// episodes' ends exact, where the provider keeps a live log.
		ServerLogFile: env.PostgresLogFile,
		// A probe source that fails (PgBouncer's console, the metrics
		// scrape) does not stop the others; say so as it happens.
		OnWarning: func(w rundir.Warning) {
			if w.Recovered {
				fmt.Fprintf(logw, "[%s] probe: %s works again\n", o.Name, w.Source)
				return
			}
			fmt.Fprintf(logw, "[%s] probe warning: %s: %s\n", o.Name, w.Source, redact.String(w.Message))
		},
	})
	if err != nil {
		return sum, interrupted(ctx, fmt.Errorf("start probes: %w", err))
	}
	o.watchProbes(poller) // watch.go
	probeStopped := false
	defer func() {
		if !probeStopped {
			_, _ = poller.Stop()
		}
	}()

	afterSoak, err := o.Soak.beforeLoad(ctx, env) // soakhooks.go; nothing without Soak
	if err != nil {
		return sum, interrupted(ctx, fmt.Errorf("soak baseline: %w", err))
	}
	fp := faultplay.Start(ctx, p.Faults, faultplay.Options{Env: env, Poller: poller, Every: p.Probe.Interval, Settle: p.Probe.StuckAfter, Log: logw, Name: o.Name}) // nil without faults
	var res *rundir.LoadResult
	var loadErr error
	switch {
	case o.Shards > 1:
		res, loadErr = playDockerShards(ctx, p.Plan, o.Shards, env, o.Dir, logw, o.Name)
	case o.Workers.On():
		res, loadErr = playWorkers(ctx, o, env, sum, logw, probeAnnotated(logw, "["+o.Name+"] ", poller), poller.Gatherer())
	default:
		res, loadErr = playInProcess(ctx, o, env, poller, logw)
	}
	sum.Load = res
	switch {
	case loadErr != nil || ctx.Err() != nil:
	case o.Soak != nil:
		o.Soak.coolDown(ctx, logw, o.Name, poller)
	case p.Probe.Drain > 0:
		drain(ctx, p.Probe.Drain, logw, o.Name, poller)
	}
	afterSoak()
	fp.Stop(o.Dir, p.RecoverySeconds, sum) // every fault removed; recovery and its thresholds into sum
	probeSum, stopErr := poller.Stop()
	probeStopped = true
	sum.Probe = probeSum
	joinEpisodes(o.Dir, logw, o.Name)
	if loadErr != nil {
		return sum, interrupted(ctx, fmt.Errorf("load: %w", loadErr))
	}
	if stopErr != nil {
		return sum, fmt.Errorf("probes: %w", stopErr)
	}
	return sum, interrupted(ctx, nil)
}

// playInProcess plays o's load from this process against env's gateway.
func playInProcess(ctx context.Context, o Options, env *fixtures.Env, poller *probes.Poller, logw io.Writer) (*rundir.LoadResult, error) {
	fmt.Fprintf(logw, "[%s] load: %s against %s\n", o.Name, o.Profile.Plan.Describe(), redact.URL(env.GatewayURL))
	return engine.RunPlan(ctx, o.Profile.Plan, engine.RunOptions{
		Target:      env.GatewayURL,
		Tokens:      env.Tokens,
		RunDir:      o.Dir,
		MetricsAddr: o.MetricsAddr,
		Gatherer:    poller.Gatherer(),
		TLS:         o.Target.TLS,
		OAuth:       o.Target.OAuth,
		Progress:    probeAnnotated(logw, "["+o.Name+"] ", poller),
		Segment:     o.Shard,
		StartAt:     o.StartAt,
		Spans:       o.spans(),
		Watch:       o.engineWatch(),
		SourceAddrs: o.inProcessSources(),
	})
}

// joinEpisodes gives the run's episodes the requests that left them
// (episodes.jsonl's request), once both the probe and the engine are done.
func joinEpisodes(dir string, logw io.Writer, name string) {
	traced, joined, err := forensics.JoinEpisodes(dir)
	switch {
	case err != nil:
		fmt.Fprintf(logw, "[%s] could not join the episodes to their requests: %v\n", name, err)
	case traced > 0:
		fmt.Fprintf(logw, "[%s] episodes joined to the requests that left them: %d of %d with a trace id\n", name, joined, traced)
	}
}

// interrupted turns any outcome of a cancelled run into ErrInterrupted.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return err
}

// drain keeps the probes watching after the load until no session is idle
// in a transaction for two seconds in a row, or for at most d: leaked
// sessions are then seen to their end, and a healthy run does not wait.
func drain(ctx context.Context, d time.Duration, w io.Writer, name string, p *probes.Poller) {
	fmt.Fprintf(w, "[%s] load done; probes watch up to %s more for sessions still held\n", name, d)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	end := time.After(d)
	quiet := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-end:
			return
		case <-t.C:
		}
		s := p.Snapshot()
		fmt.Fprintf(w, "[%s] drain: %s\n", name, probeLine(s))
		if s.States.IdleInTx+s.States.IdleInTxAborted == 0 && s.Error == "" {
			quiet++
		} else {
			quiet = 0
		}
		if quiet >= 2 {
			fmt.Fprintf(w, "[%s] drain: no session idle in a transaction; done\n", name)
			return
		}
	}
}

func probeLine(s rundir.Sample) string {
	line := fmt.Sprintf("idle-in-tx %d stuck %d oldest %.1fs", s.States.IdleInTx+s.States.IdleInTxAborted, s.StuckIdleInTx, s.OldestIdleInTxSeconds)
	if s.PgBouncer != nil {
		line += fmt.Sprintf(" pgbouncer waiting %d", s.PgBouncer.ClWaiting)
	}
	return line
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// prefixed writes each line with a prefix, for the provider's progress.
func prefixed(w io.Writer, prefix string) io.Writer {
	return &lineWriter{emit: func(line []byte) { fmt.Fprintf(w, "%s%s\n", prefix, line) }}
}

// Prefixed is a writer that writes each complete line written to it to w
// with prefix, for the application layer's other logs (capacity's stages).
func Prefixed(w io.Writer, prefix string) io.Writer { return prefixed(w, prefix) }

// probeAnnotated appends the probes' latest view to each progress line of
// the engine, so one line shows load and leak together.
func probeAnnotated(w io.Writer, prefix string, p *probes.Poller) io.Writer {
	return &lineWriter{emit: func(line []byte) {
		fmt.Fprintf(w, "%s%s | %s\n", prefix, line, probeLine(p.Snapshot()))
	}}
}

// lineWriter hands each complete line written to it to emit.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(line []byte)
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func fillEnvironment(e *rundir.Environment, env *fixtures.Env) {
	e.Provider = env.Provider
	e.PostgresVersion = env.PostgresVersion
	e.PgBouncerVersion = env.PgBouncerVersion
	// 0 is PostgreSQL's own word for off; the stack's config says it
	// with a negative duration.
	e.IdleInTxTimeoutSeconds = max(0, env.Config.IdleInTxTimeout.Seconds())
	e.MaxConnections = env.Config.MaxConnections
	e.PoolMode = env.Config.PoolMode
	e.PgBouncerPoolSize = env.Config.PgBouncerPoolSize
	e.GatewayPoolSize = env.Config.GatewayPoolSize
	e.Target = redact.URL(env.GatewayURL) // a URL may carry credentials
	e.Database = env.Database
}

// writeConfig records the resolved configuration. Tokens and DSNs are not
// part of it (their fields are excluded from JSON), so no secret lands here.
func writeConfig(dir string, o Options, stack stack.Config) error {
	prof, err := o.Profile.Record()
	if err != nil {
		return err
	}
	st, err := json.Marshal(stack)
	if err != nil {
		return fmt.Errorf("record the stack: %w", err)
	}
	return rundir.WriteConfig(dir, &rundir.Config{Name: o.Name, Variant: o.Variant, Profile: prof, Stack: st, Version: o.Version})
}

// scrapeTargets is the service's own pool, read from its /metrics: the
// reference gateway's by its own mapping; a service leakbench did not
// start (--metrics-url) by whichever built-in mapping its series match
// (auto: the gateway's, go_sql, HikariCP, SQLAlchemy, the OpenTelemetry
// conventions), since nobody told us what it exports.
func scrapeTargets(env *fixtures.Env) []poolmetrics.Target {
	if env.GatewayMetricsURL == "" {
		return nil
	}
	mapping := "gateway"
	if env.Provider == fixtures.ProviderExternal {
		mapping = "auto"
	}
	return []poolmetrics.Target{{URL: env.GatewayMetricsURL, Mapping: mapping}}
}

// sentTokens are the bearer tokens the run's users send, as the engine
// picks them: the stack's (or --tokens-file's), else the plan's.
func sentTokens(env *fixtures.Env, p profiles.Profile) []string {
	if len(env.Tokens) > 0 {
		return env.Tokens
	}
	if p.Plan != nil {
		return p.Plan.Tokens
	}
	return nil
}

package runner

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// TargetOptions are how the engine reaches the user's own service.
type TargetOptions struct {
	// TLS configures an https target (nil: the system roots).
	TLS *tls.Config
	// CAFile and Insecure are the settings TLS was built from
	// (mcp.TLSConfig): worker processes build their own from them.
	CAFile   string
	Insecure bool
	// OAuth, if set, gets bearer tokens with the client-credentials
	// grant. It holds a secret: never written anywhere.
	OAuth *bearer.OAuthConfig
}

// runLoadOnly plays the load against a stack without a database to probe
// (an external service, no DSN): the run directory gets the load and a
// summary without a probe section, and thresholds alone judge it.
func runLoadOnly(ctx context.Context, o Options, sum *rundir.Summary, env *fixtures.Env, logw io.Writer) (*rundir.Summary, error) {
	sum.Environment.LoadOnly = true
	p := o.Profile
	fmt.Fprintf(logw, "[%s] load only (no database to probe): %s against %s\n", o.Name, p.Plan.Describe(), sum.Environment.Target)
	var res *rundir.LoadResult
	var err error
	if o.Workers.On() {
		res, err = playWorkers(ctx, o, env, sum, logw, prefixed(logw, "["+o.Name+"] "), nil)
	} else {
		res, err = engine.RunPlan(ctx, p.Plan, engine.RunOptions{
			Target:      env.GatewayURL,
			Tokens:      env.Tokens,
			RunDir:      o.Dir,
			MetricsAddr: o.MetricsAddr,
			TLS:         o.Target.TLS,
			OAuth:       o.Target.OAuth,
			Progress:    prefixed(logw, "["+o.Name+"] "),
			Segment:     o.Shard,
			StartAt:     o.StartAt,
			Spans:       o.spans(),
			SourceAddrs: o.inProcessSources(),
			Watch:       o.engineWatch(),
		})
	}
	sum.Load = res
	if err != nil {
		return sum, interrupted(ctx, fmt.Errorf("load: %w", err))
	}
	return sum, interrupted(ctx, nil)
}

package scenarios

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"
)

// stepLegacy is the internal step that plays one request of a legacy
// Config iteration.
const stepLegacy = "legacy"

// legacyFlow is what a Config iteration does after its think time: a
// tools/list every ListToolsEvery-th iteration, else a tools/call picked
// by weight, or a ping when there are no tools.
type legacyFlow struct {
	every      int
	list, ping cstep
	calls      []cstep
	cum        []int
}

func (l *legacyFlow) next(v *vu) *cstep {
	n := v.tc.iteration + 1
	switch {
	case l.every > 0 && n%int64(l.every) == 0:
		return &l.list
	case len(l.calls) > 0:
		return &l.calls[sort.SearchInts(l.cum, v.tc.rng.IntN(l.cum[len(l.cum)-1])+1)]
	}
	return &l.ping
}

// Run plays cfg: cfg.Users virtual users, started evenly over cfg.RampUp,
// each initializing an MCP session and then iterating (tools/list every
// cfg.ListToolsEvery-th iteration, else a tools/call picked by weight, or a
// ping if cfg.Tools is empty) with think times in between, until
// cfg.Duration has passed; then each user closes its session. It is one
// ramping-vus (or constant-vus) scenario of the engine behind [RunPlan].
//
// When Duration ends, users start nothing new but let a request in flight
// finish (within RequestTimeout): cancelling them all at once would look to
// the target like a burst of clients giving up, the very pattern that
// triggers the leaks under test. When ctx ends, requests in flight are
// abandoned at once (kind "canceled"), and Run returns the partial result
// with Interrupted set and an error wrapping ctx's cause. Either way Run
// returns within about RequestTimeout + 1s and leaves no goroutine behind.
//
// Progress lines go to progress every second, if it is not nil. An invalid
// cfg is reported before anything is sent.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid scenario config: %w", err)
	}
	cfg = cfg.withDefaults()
	cp, err := compilePlan(cfg.plan())
	if err != nil {
		return nil, fmt.Errorf("invalid scenario config: %w", err)
	}
	cs := cp.scen[0]
	l := &legacyFlow{every: cfg.ListToolsEvery, ping: cs.flow[1], list: cs.flow[2], calls: cs.flow[3:]}
	total := 0
	for _, t := range cfg.Tools {
		total += max(t.Weight, 1)
		l.cum = append(l.cum, total)
	}
	cs.legacy = l
	cs.flow = []cstep{cs.flow[0], {kind: stepLegacy}}

	e := newEngine(cp, cfg.Tokens)
	e.legacy = true
	defer e.client.CloseIdleConnections()
	res := e.run(ctx, RunOptions{Progress: progress}, &outputs{})
	cfg.Tokens = nil // secrets stay out of results
	res.Config = cfg
	if ctx.Err() != nil {
		res.Interrupted = true
		return res, fmt.Errorf("run interrupted after %s: %w",
			res.Ended.Sub(res.Started).Round(time.Millisecond), context.Cause(ctx))
	}
	return res, nil
}

// plan turns a (valid, defaulted) Config into a one-scenario plan whose
// flow is a think time, then the candidate requests of legacyFlow.
func (c Config) plan() *Plan {
	flow := []Step{
		{Kind: StepThink, Think: Think{Distribution: ThinkUniform, Min: Duration(c.ThinkMin), Max: Duration(c.ThinkMax)}},
		{Kind: OpPing},
		{Kind: OpListTools},
	}
	for _, t := range c.Tools {
		flow = append(flow, Step{Kind: OpCallTool, Name: t.Name, Arguments: t.Arguments})
	}
	s := Scenario{
		Name: "default", Executor: ExecConstantVUs, VUs: c.Users, Duration: Duration(c.Duration),
		// A request in flight at the end may finish: it runs into its
		// own timeout at the latest.
		GracefulStop: Duration(c.RequestTimeout + 500*time.Millisecond),
		Flow:         flow,
	}
	if c.RampUp > 0 {
		s.Executor, s.VUs, s.Duration = ExecRampingVUs, 0, 0
		s.Stages = []Stage{{Duration: Duration(c.RampUp), Target: c.Users}, {Duration: Duration(c.Duration - c.RampUp), Target: c.Users}}
	}
	return &Plan{Target: c.Target, Timeout: Duration(c.RequestTimeout), Seed: c.Seed, Tokens: c.Tokens, Scenarios: []Scenario{s}}
}

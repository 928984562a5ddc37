package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/probes"
)

// SoakHooks are what a soak (package soak) adds to a run: a baseline with
// the probes sampling and no load, and after the load a cool-down of
// exactly CoolDown, the probes still sampling, instead of the profile's
// drain (which ends early once nothing is idle in a transaction).
type SoakHooks struct {
	// BeforeLoad runs once the stack is up and the probes sample, before
	// the load starts: the soak's baseline (it returns when that is
	// over). The returned after runs once the cool-down is over, before
	// the probes stop and the stack goes. Nil: none.
	BeforeLoad func(ctx context.Context, env *fixtures.Env) (after func(), err error)
	// CoolDown is how long the probes keep sampling after the load.
	CoolDown time.Duration
}

// beforeLoad runs h.BeforeLoad; after is never nil.
func (h *SoakHooks) beforeLoad(ctx context.Context, env *fixtures.Env) (after func(), err error) {
	if h == nil || h.BeforeLoad == nil {
		return func() {}, nil
	}
	after, err = h.BeforeLoad(ctx, env)
	if after == nil {
		after = func() {}
	}
	return after, err
}

// coolDown keeps the probes sampling for h.CoolDown with no load, saying
// what they see every ten seconds; Ctrl-C ends it.
func (h *SoakHooks) coolDown(ctx context.Context, w io.Writer, name string, p *probes.Poller) {
	if h.CoolDown <= 0 {
		return
	}
	fmt.Fprintf(w, "[%s] load done; cool-down: the probes sample %s more with no load\n", name, h.CoolDown)
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	end := time.NewTimer(h.CoolDown)
	defer end.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-end.C:
			fmt.Fprintf(w, "[%s] cool-down over: %s\n", name, probeLine(p.Snapshot()))
			return
		case <-t.C:
			fmt.Fprintf(w, "[%s] cool-down: %s\n", name, probeLine(p.Snapshot()))
		}
	}
}

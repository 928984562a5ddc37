package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// ErrScale is a change of users the engine refuses: no such
// externally-controlled scenario, a number outside 0..maxVUs, or a
// scenario that is over. The run goes on.
var ErrScale = errors.New("scale refused")

// Who asks for a change (ScaleChange.By).
const (
	ScaleByPage    = "page"
	ScaleByCommand = "command"
)

// ScaleFunc changes an externally-controlled scenario's users to vus
// (scenario "" names the plan's only one) and returns the change as
// recorded; by is ScaleByPage or ScaleByCommand.
type ScaleFunc func(scenario string, vus int, by string) (rundir.ScaleChange, error)

// Scaler is a Watcher that can also change the users of the run's
// externally-controlled scenarios: the engine hands it Scale as the load
// starts, when the plan has one.
type Scaler interface {
	Watcher
	// Scalable gets Scale and the scenarios it may change.
	Scalable(scale ScaleFunc, scenarios []ScaleTarget)
}

// ScaleTarget is an externally-controlled scenario as it starts: its
// users, and the most a change may ask for.
type ScaleTarget struct {
	Name   string `json:"name"`
	VUs    int    `json:"vus"`
	MaxVUs int    `json:"max_vus"`
}

// scaling is the engine's record of changes: every one for the result,
// and those not yet in a load.jsonl line.
type scaling struct {
	mu      sync.Mutex
	all     []rundir.ScaleChange
	pending []rundir.ScaleChange
}

// externallyControlled runs VUs users, then as many as Scale says (the
// latest wins), until the duration ends. A user stopped finishes its
// request in flight within gracefulStop.
func (sr *scenarioRun) externallyControlled() {
	u := newUserSlots(sr, sr.cs.Users, sr.cs.GracefulStop.D())
	defer u.release()
	defer sr.over.Store(true)
	u.set(sr.target())
	t := time.NewTimer(time.Until(sr.start.Add(sr.cs.Length)))
	defer t.Stop()
	for {
		select {
		case <-sr.soft.Done():
			return
		case <-t.C:
			return
		case <-sr.scaled:
			u.set(sr.target())
		}
	}
}

// target is the users an externally-controlled scenario is told to run.
func (sr *scenarioRun) target() int {
	sr.scaleMu.Lock()
	defer sr.scaleMu.Unlock()
	return sr.vusTarget
}

// Scale changes an externally-controlled scenario's users (ScaleFunc).
func (e *engine) Scale(scenario string, vus int, by string) (rundir.ScaleChange, error) {
	var sr *scenarioRun
	var names []string
	for _, r := range e.runs {
		if r.cs.Executor != plan.ExecExternallyControlled {
			continue
		}
		names = append(names, r.cs.Name)
		if r.cs.Name == scenario {
			sr = r
		}
	}
	switch {
	case len(names) == 0:
		return rundir.ScaleChange{}, fmt.Errorf("%w: the plan has no externally-controlled scenario", ErrScale)
	case scenario == "" && len(names) == 1:
		sr = e.runs[e.runIndex(names[0])]
	case sr == nil:
		return rundir.ScaleChange{}, fmt.Errorf("%w: no externally-controlled scenario %q; the plan's: %s", ErrScale, scenario, strings.Join(names, ", "))
	}
	if vus < 0 || vus > sr.cs.Users {
		return rundir.ScaleChange{}, fmt.Errorf("%w: %s: %d users; want 0 to maxVUs (%d)", ErrScale, sr.cs.Name, vus, sr.cs.Users)
	}
	if sr.over.Load() {
		return rundir.ScaleChange{}, fmt.Errorf("%w: %s is over", ErrScale, sr.cs.Name)
	}
	if by != ScaleByPage && by != ScaleByCommand {
		by = ScaleByCommand
	}
	now := time.Now()
	sr.scaleMu.Lock()
	ch := rundir.ScaleChange{Time: now.UTC(), ElapsedSeconds: round3(now.Sub(e.started).Seconds()), Scenario: sr.cs.Name, From: sr.vusTarget, To: vus, By: by}
	sr.vusTarget = vus
	sr.scaleMu.Unlock()
	select {
	case sr.scaled <- struct{}{}:
	default: // a change is already waiting; it reads the latest target
	}
	e.scaling.mu.Lock()
	e.scaling.all = append(e.scaling.all, ch)
	e.scaling.pending = append(e.scaling.pending, ch)
	e.scaling.mu.Unlock()
	return ch, nil
}

func (e *engine) runIndex(name string) int {
	for i, r := range e.runs {
		if r.cs.Name == name {
			return i
		}
	}
	return -1
}

// takeScaleChanges returns the changes since the last call, for the next
// load.jsonl line.
func (e *engine) takeScaleChanges() []rundir.ScaleChange {
	e.scaling.mu.Lock()
	defer e.scaling.mu.Unlock()
	p := e.scaling.pending
	e.scaling.pending = nil
	return p
}

// scaleChanges is every change, for the result.
func (e *engine) scaleChanges() []rundir.ScaleChange {
	e.scaling.mu.Lock()
	defer e.scaling.mu.Unlock()
	return append([]rundir.ScaleChange(nil), e.scaling.all...)
}

// scaleTargets are the plan's externally-controlled scenarios.
func (e *engine) scaleTargets() []ScaleTarget {
	var ts []ScaleTarget
	for _, r := range e.runs {
		if r.cs.Executor == plan.ExecExternallyControlled {
			ts = append(ts, ScaleTarget{Name: r.cs.Name, VUs: r.cs.VUs, MaxVUs: r.cs.Users})
		}
	}
	return ts
}

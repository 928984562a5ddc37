package engine

// Captures and checks: what a step finds in its answer.

import (
	"sync"
	"sync/atomic"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// maxAnswerSample bounds the sample answer kept for a failed check.
const maxAnswerSample = 500

// checkCounter counts one check of one scenario.
type checkCounter struct {
	pass, fail atomic.Int64
	sampled    atomic.Bool
	mu         sync.Mutex
	sample     string // the first answer it failed on, redacted and truncated
	_          [40]byte
}

// checkStats holds every scenario's check counters, by check id.
type checkStats struct {
	byScen [][]checkCounter
}

func newCheckStats(cp *plan.Compiled) *checkStats {
	cs := &checkStats{byScen: make([][]checkCounter, len(cp.Scenarios))}
	for i, s := range cp.Scenarios {
		cs.byScen[i] = make([]checkCounter, len(s.Checks))
	}
	return cs
}

// needsAnswers reports whether any step of the flow captures or checks.
func needsAnswers(steps []plan.CompiledStep) bool {
	for _, c := range steps {
		if len(c.Captures) > 0 || len(c.Checks) > 0 {
			return true
		}
		for _, ch := range c.Choices {
			if needsAnswers(ch) {
				return true
			}
		}
	}
	return false
}

// setupUser gives a new user its data row and its variables.
func (v *vu) setupUser(user int) {
	cs := v.cs
	if len(cs.Vars) > 0 {
		v.tc.Captured = make([]plan.Captured, len(cs.Vars))
	}
	if needsAnswers(cs.CompiledScenario.Flow) {
		v.s.KeepResults(true)
	}
	if t := cs.DataTable; t != nil {
		v.tc.Data = t
		k := user - v.sr.dataBase // its place in the whole scenario
		v.dataUser = k
		switch cs.Data.Mode {
		case plan.DataRandom:
			v.tc.Row = v.tc.Rand.IntN(t.Rows())
		default: // sequential; unique (the plan made sure k < rows)
			v.tc.Row = k % t.Rows()
		}
	}
}

// drawRow gives the user a fresh row at the start of each iteration when
// its data file is drawn per iteration: random, a seeded draw (the first
// iteration keeps setupUser's); sequential, row (k + i × users) mod rows
// for user k's iteration i, so that the users walk the file together.
// Per user (the default), nothing changes.
func (v *vu) drawRow() {
	cs := v.cs
	t := cs.DataTable
	if t == nil || cs.Data.Per != plan.DataPerIteration {
		return
	}
	rows, it := int64(t.Rows()), v.tc.Iteration
	switch cs.Data.Mode {
	case plan.DataRandom:
		if it > 0 {
			v.tc.Row = v.tc.Rand.IntN(int(rows))
		}
	default: // sequential (plan refuses unique per iteration)
		k := int64(v.dataUser) % rows
		v.tc.Row = int((k + (it%rows)*(int64(v.sr.dataUsers)%rows)) % rows)
	}
}

// varsMissing returns an error when step c uses a variable no capture has
// set yet: the step is not sent.
func (v *vu) varsMissing(c *step) error {
	for _, slot := range c.Uses {
		if !v.tc.Captured[slot].Set {
			return &mcp.Error{Kind: mcp.KindCapture, Op: c.Kind, Msg: "{{vars." + v.cs.Vars[slot] + "}} is not set: no capture found it yet"}
		}
	}
	return nil
}

// judge applies step c's captures and checks to its answer (nil: none
// came) and returns the step's error: err, or a failed capture's.
func (v *vu) judge(c *step, answer []byte, err error) error {
	if len(c.Captures) == 0 && len(c.Checks) == 0 {
		return err
	}
	kind := mcp.Classify(err)
	if kind == mcp.KindAborted || kind == mcp.KindCanceled {
		return err // we gave up on it: nothing to judge
	}
	if len(c.Checks) > 0 {
		counters := v.sr.e.m.checks.byScen[v.cs.idx]
		for _, ch := range c.Checks {
			cc := &counters[ch.ID]
			if answer != nil && ch.Eval(answer) {
				cc.pass.Add(1)
				continue
			}
			cc.fail.Add(1)
			if !cc.sampled.Load() && cc.sampled.CompareAndSwap(false, true) {
				cc.setSample(v.sr.e.m.secrets, answer, err)
			}
		}
	}
	for i := range c.Captures {
		cp := &c.Captures[i]
		slot := &v.tc.Captured[cp.Slot]
		if answer == nil {
			slot.Set = false
			continue
		}
		raw, text, ok := cp.Find(answer)
		if !ok {
			slot.Set = false
			if err == nil {
				err = &mcp.Error{Kind: mcp.KindCapture, Op: c.Kind, Msg: "capture " + cp.Name + ": " + textutil.Truncate(cp.Path, 80) + " finds nothing in the answer"}
			}
			continue
		}
		*slot = plan.Captured{Raw: raw, Text: text, Set: true}
	}
	return err
}

func (cc *checkCounter) setSample(secrets *redact.Secrets, answer []byte, err error) {
	s := string(answer)
	if answer == nil {
		s = "(no answer"
		if err != nil {
			s += ": " + err.Error()
		}
		s += ")"
	}
	s = textutil.Truncate(secrets.Redact(s), maxAnswerSample)
	cc.mu.Lock()
	cc.sample = s
	cc.mu.Unlock()
}

// checkResults lists every check, in scenario and plan order.
func (e *engine) checkResults() []rundir.CheckResult {
	var out []rundir.CheckResult
	for i, sr := range e.runs {
		for id, name := range sr.cs.Checks {
			cc := &e.m.checks.byScen[i][id]
			r := rundir.CheckResult{Scenario: sr.cs.Name, Check: name, Passes: cc.pass.Load(), Fails: cc.fail.Load()}
			cc.mu.Lock()
			r.SampleAnswer = cc.sample
			cc.mu.Unlock()
			out = append(out, r)
		}
	}
	return out
}

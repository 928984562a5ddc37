package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/scenarios/mcp"
)

// Warnings lists what a valid plan does that will fail against some
// servers, each a line as problems are ("file:line: path: what happens;
// what to do"), in plan order; nil when there is none. The caller prints
// them before any load, so that a scenario that starts failing the day
// its server upgrades is explained before the run, not by its figures.
//
// Today there is one: a ping step where users may speak 2026-07-28
// (protocolVersion auto, the default, or 2026-07-28 itself), which has
// no ping — the server answers method-not-found, a jsonrpc failure.
func (c *Compiled) Warnings() []string {
	out := slices.Clone(c.Plan.notes)
	for _, cs := range c.Scenarios {
		if cs.Pin != AutoVersion && cs.Pin != mcp.Version20260728 {
			continue // a 2025 version, pinned or negotiated: ping exists
		}
		path := "scenarios." + cs.Name + ".flow"
		// The flow as written, not as compiled: its steps carry their lines.
		walkSteps(cs.Scenario.Flow, path, func(st *Step, sp string) {
			if st.Kind != OpPing {
				return
			}
			msg := "ping under protocolVersion auto fails with a jsonrpc error on every server that offers 2026-07-28 (ping was removed there)"
			if cs.Pin == mcp.Version20260728 {
				msg = "ping under protocolVersion 2026-07-28 fails with a jsonrpc error on every server (ping was removed in 2026-07-28)"
			}
			out = append(out, warning(c.Plan.file, st.line, sp, msg+"; pin a 2025 version (protocolVersion: "+mcp.ProtocolVersion+") or drop the step"))
		})
	}
	return out
}

// AddWarning records a warning the scenario-file decoder found (a key in
// a deprecated spelling, say), listed first by Warnings, as
// "file:line: path: msg".
func (p *Plan) AddWarning(line int, path, msg string) {
	p.notes = append(p.notes, warning(p.file, line, path, msg))
}

// Warnings compiles p and returns its warnings ([Compiled.Warnings]);
// nil for a plan that does not compile (its problems say more).
func (p *Plan) Warnings() []string {
	c, err := Compile(p)
	if err != nil {
		return nil
	}
	return c.Warnings()
}

// walkSteps calls f on every step of steps and of their choices, with
// its path as compile names it ("scenarios.s.flow[2].choose[0].steps[0].ping").
func walkSteps(steps []Step, path string, f func(st *Step, sp string)) {
	for i := range steps {
		st := &steps[i]
		sp := fmt.Sprintf("%s[%d].%s", path, i, st.Kind)
		f(st, sp)
		for j := range st.Choices {
			walkSteps(st.Choices[j].Steps, fmt.Sprintf("%s[%d].steps", sp, j), f)
		}
	}
}

func warning(file string, line int, path, msg string) string {
	var b strings.Builder
	writeProblem(&b, file, Problem{Line: line, Path: path, Msg: msg})
	return b.String()
}

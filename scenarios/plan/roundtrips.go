package plan

import (
	"encoding/json"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// maxTaskTimeout bounds a step's task: timeout, as MaxDuration bounds a
// run.
const maxTaskTimeout = MaxDuration

// compileRoundTrips checks a step's inputs: and task: and builds what its
// request adds in the 2026-07-28 era (mcp.RequestOptions), once for all
// users.
func compileRoundTrips(pe *Problems, st *Step, c *CompiledStep, path string) {
	if st.Inputs == nil && st.Task == nil {
		return
	}
	o := &mcp.RequestOptions{}
	if st.Inputs != nil {
		o.Inputs = mcp.Inputs{}
		for _, k := range sortedKeys(st.Inputs) {
			v := st.Inputs[k]
			if _, ok := v.(map[string]any); !ok {
				pe.Add(st.line, path+".inputs."+k, "want an object: the result the user gives for that input request (e.g. {action: accept, content: {name: ada}} for an elicitation)")
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				pe.Add(st.line, path+".inputs."+k, "cannot be written as JSON: %s", textutil.Truncate(err.Error(), 80))
				continue
			}
			o.Inputs[k] = b
		}
		if len(st.Inputs) == 0 {
			pe.Add(st.line, path+".inputs", "empty; want the answers to the server's input requests, by key or by method (elicitation/create, sampling/createMessage, roots/list)")
		}
	}
	if t := st.Task; t != nil {
		durIn(pe, st.line, path+".task.cancelAfter", t.CancelAfter, 0, maxTaskTimeout, false)
		durIn(pe, st.line, path+".task.timeout", t.Timeout, 0, maxTaskTimeout, false)
		timeout := t.Timeout
		if timeout == 0 {
			timeout = Duration(mcp.DefaultTaskTimeout)
		}
		if t.CancelAfter >= timeout {
			pe.Add(st.line, path+".task.cancelAfter", "%s is not before the task's timeout (%s): it would never cancel", t.CancelAfter, timeout)
		}
		o.Task = &mcp.TaskOptions{CancelAfter: t.CancelAfter.D(), Timeout: t.Timeout.D()}
	}
	c.RoundTrips = o
}

package scenariofile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// stepAliases maps normalized step names to step kinds; xk6-mcp's method
// names are accepted beside the MCP ones.
var stepAliases = map[string]string{
	"initialize": plan.OpInitialize, "ping": plan.OpPing,
	"tools/list": plan.OpListTools, "listtools": plan.OpListTools, "listalltools": plan.OpListTools,
	"tools/call": plan.OpCallTool, "calltool": plan.OpCallTool,
	"resources/list": plan.OpListResources, "listresources": plan.OpListResources,
	"resources/read": plan.OpReadResource, "readresource": plan.OpReadResource,
	"prompts/list": plan.OpListPrompts, "listprompts": plan.OpListPrompts,
	"prompts/get": plan.OpGetPrompt, "getprompt": plan.OpGetPrompt,
	"server/discover": plan.OpDiscover, "discover": plan.OpDiscover,
	"think": plan.StepThink, "sleep": plan.StepThink,
	"endsession": plan.StepEndSession, "choose": plan.StepChoose, "http": plan.StepHTTP,
}

// stepAliasNames are xk6-mcp's step names, in their one spelling: the
// other step names are plan.StepKinds.
var stepAliasNames = []string{"listTools", "listAllTools", "callTool", "listResources", "readResource",
	"listPrompts", "getPrompt", "discover", "sleep"}

var requestOptions = []string{"timeout", "abortAfter", "capture", "check"}

// stepOptions lists, per step kind, the options its mapping may hold.
var stepOptions = map[string][]string{
	plan.OpCallTool:     {"name", "arguments", "timeout", "abortAfter", "inputs", "task", "capture", "check"},
	plan.OpGetPrompt:    {"name", "arguments", "timeout", "abortAfter", "inputs", "capture", "check"},
	plan.OpReadResource: {"uri", "timeout", "abortAfter", "inputs", "capture", "check"},
	plan.StepHTTP:       {"method", "url", "name", "headers", "body", "expectStatus", "timeout", "abortAfter", "capture", "check"},
	plan.StepEndSession: {"probability"},
}

func (d *ydec) steps(n *yaml.Node, path string) []plan.Step {
	var out []plan.Step
	for i, sn := range d.seq(n, path) {
		out = append(out, d.step(sn, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

func (d *ydec) step(n *yaml.Node, path string) plan.Step {
	var st plan.Step
	st.SetLine(n.Line)
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return st
	}
	var name string
	var opts *yaml.Node
	switch r.Kind {
	case yaml.ScalarNode:
		name = r.Value
	case yaml.MappingNode:
		if len(r.Content) != 2 {
			d.errf(r, path, "a step is one name with its options (e.g. - tools/call: {name: echo}); this mapping has %d keys", len(r.Content)/2)
			return st
		}
		name, opts = r.Content[0].Value, r.Content[1]
	default:
		d.errf(r, path, "want a step (a name, or name: options), got %s", describe(r))
		return st
	}
	kind, ok := stepAliases[norm(name)]
	if !ok {
		d.errf(r, path, "unknown step %q; want one of %s", textutil.Truncate(name, 40), strings.Join(plan.StepKinds, ", "))
		return st
	}
	if !slices.Contains(plan.StepKinds, name) && !slices.Contains(stepAliasNames, name) {
		// As keys: one spelling per step name (end_session reads, and warns).
		d.warns = append(d.warns, plan.Problem{Line: r.Line, Path: path + "." + kind,
			Msg: fmt.Sprintf("%q is a deprecated spelling; write %s", textutil.Truncate(name, 40), kind)})
	}
	st.Kind = kind
	path += "." + kind
	if opts != nil {
		if opts, ok = d.budgetLeft(opts, path); !ok {
			return st
		}
		if opts.Kind == yaml.ScalarNode && opts.ShortTag() == "!!null" {
			opts = nil
		}
	}
	switch kind {
	case plan.StepThink:
		d.think(opts, r, path, &st)
		return st
	case plan.StepChoose:
		d.choose(opts, r, path, &st)
		return st
	case plan.StepEndSession:
		st.Probability = 1
		if opts != nil && opts.Kind == yaml.ScalarNode {
			st.Probability = d.float(opts, path+".probability")
			return st
		}
	}
	if kind == plan.StepHTTP {
		st.HTTP = &plan.HTTPRequest{}
	}
	if opts == nil {
		if kind == plan.OpCallTool || kind == plan.OpGetPrompt || kind == plan.OpReadResource || kind == plan.StepHTTP {
			d.errf(r, path, "needs options, e.g. - %s: %s", kind, map[string]string{plan.OpCallTool: "{name: echo, arguments: {text: hi}}",
				plan.OpGetPrompt: "{name: greet, arguments: {who: ada}}", plan.OpReadResource: "{uri: file:///data.txt}", plan.StepHTTP: "{method: GET, url: /api/health}"}[kind])
		}
		return st
	}
	if opts.Kind == yaml.ScalarNode {
		// Shorthand: the tool or prompt name, or the resource URI.
		switch kind {
		case plan.OpCallTool, plan.OpGetPrompt:
			st.Name = opts.Value
			return st
		case plan.OpReadResource:
			st.URI = opts.Value
			return st
		case plan.StepHTTP:
			st.HTTP.URL = opts.Value
			return st
		}
	}
	allowed := stepOptions[kind]
	if allowed == nil {
		allowed = requestOptions
	}
	fields, _ := d.mapping(opts, path, allowed)
	for _, f := range fields {
		fp := path + "." + f.key
		switch f.key {
		case "uri":
			st.URI = d.str(f.v, fp)
		case "arguments":
			if v, ok := d.value(f.v, fp, 0).(map[string]any); ok {
				st.Arguments = v
			} else if r, ok := d.budgetLeft(f.v, fp); ok && !(r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null") {
				d.errf(f.v, fp, "want a mapping of argument names to values")
			}
		case "timeout":
			st.Timeout = d.duration(f.v, fp)
		case "abortAfter":
			st.AbortAfter = d.duration(f.v, fp)
		case "inputs":
			st.Inputs = d.inputs(f.v, fp)
		case "task":
			st.Task = d.task(f.v, fp)
		case "probability":
			st.Probability = d.float(f.v, fp)
		case "capture":
			st.Captures = d.captures(f.v, fp)
		case "check":
			st.Checks = d.checks(f.v, fp)
		case "method":
			st.HTTP.Method = d.str(f.v, fp)
		case "url":
			st.HTTP.URL = d.str(f.v, fp)
		case "name":
			if kind == plan.StepHTTP {
				st.HTTP.Name = d.str(f.v, fp)
			} else {
				st.Name = d.str(f.v, fp)
			}
		case "headers":
			hs, _ := d.mapping(f.v, fp, nil)
			st.HTTP.Headers = map[string]string{}
			for _, h := range hs {
				st.HTTP.Headers[h.raw] = d.str(h.v, fp+"."+h.raw)
			}
		case "body":
			st.HTTP.Body = d.value(f.v, fp, 0)
		case "expectStatus":
			st.HTTP.ExpectStatus = d.statuses(f.v, fp)
		}
	}
	return st
}

// think reads think: 500ms | {fixed: 500ms} | {uniform: [200ms, 1s]} |
// {exponential: 500ms}.
func (d *ydec) think(opts, at *yaml.Node, path string, st *plan.Step) {
	switch {
	case opts == nil:
		d.errf(at, path, "needs a duration, e.g. think: 500ms or think: {uniform: [200ms, 1s]}")
		return
	case opts.Kind == yaml.ScalarNode:
		st.Think = plan.Think{Distribution: plan.ThinkFixed, Duration: d.duration(opts, path)}
		return
	}
	fields, ok := d.mapping(opts, path, thinkKeys)
	if !ok {
		return
	}
	if len(fields) != 1 {
		d.errf(opts, path, "want exactly one of fixed, uniform, exponential")
		return
	}
	f := fields[0]
	st.Think.Distribution = f.key
	switch f.key {
	case plan.ThinkFixed, plan.ThinkExponential:
		st.Think.Duration = d.duration(f.v, path+"."+f.key)
	case plan.ThinkUniform:
		b := d.seq(f.v, path+".uniform")
		if len(b) != 2 {
			d.errf(f.v, path+".uniform", "want [min, max], e.g. [200ms, 1s]")
			return
		}
		st.Think.Min, st.Think.Max = d.duration(b[0], path+".uniform"), d.duration(b[1], path+".uniform")
	}
}

// choose reads choose: [{weight: 3, steps: [...]}, ...].
func (d *ydec) choose(opts, at *yaml.Node, path string, st *plan.Step) {
	if opts == nil {
		d.errf(at, path, "needs a list of {weight: N, steps: [...]}")
		return
	}
	for i, cn := range d.seq(opts, path) {
		cp := fmt.Sprintf("%s[%d]", path, i)
		ch := plan.Choice{Weight: 1}
		ch.SetLine(cn.Line)
		fields, _ := d.mapping(cn, cp, chooseKeys)
		for _, f := range fields {
			if f.key == "weight" {
				ch.Weight = d.smallInt(f.v, cp+".weight")
			} else {
				ch.Steps = d.steps(f.v, cp+".steps")
			}
		}
		st.Choices = append(st.Choices, ch)
	}
}

// value converts a YAML node into what encoding/json would produce:
// map[string]any, []any, string, int64, float64, bool or nil.
func (d *ydec) value(n *yaml.Node, path string, depth int) any {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	if depth > plan.MaxNesting {
		d.errf(r, path, "nested deeper than %d levels", plan.MaxNesting)
		return nil
	}
	switch r.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		fields, _ := d.mapping(r, path, nil)
		for _, f := range fields {
			m[f.raw] = d.value(f.v, path+"."+f.raw, depth+1)
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, 0, len(r.Content))
		for i, c := range r.Content {
			list = append(list, d.value(c, fmt.Sprintf("%s[%d]", path, i), depth+1))
		}
		return list
	case yaml.ScalarNode:
		switch r.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			return yamlTrue(r.Value)
		case "!!int":
			if v, err := yamlInt(r.Value); err == nil {
				return v
			}
		case "!!float":
			if v, err := strconv.ParseFloat(r.Value, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v
			}
			d.errf(r, path, "%q is not a number JSON can carry", textutil.Truncate(r.Value, 30))
			return nil
		}
		return r.Value
	}
	d.errf(r, path, "unsupported value %s", describe(r))
	return nil
}

// inputs reads a step's inputs: {key-or-method: result, ...}, each result
// an object (plan checks the values).
func (d *ydec) inputs(n *yaml.Node, path string) map[string]any {
	entries, ok := d.mapping(n, path, nil)
	if !ok {
		return nil
	}
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		out[e.raw] = d.value(e.v, path+"."+e.raw, 0)
	}
	return out
}

// task reads a tools/call step's task: true | {cancelAfter: D, timeout: D}.
func (d *ydec) task(n *yaml.Node, path string) *plan.TaskStep {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	if r.Kind == yaml.ScalarNode {
		if d.bool(r, path) {
			return &plan.TaskStep{}
		}
		return nil
	}
	t := &plan.TaskStep{}
	fields, _ := d.mapping(r, path, taskKeys)
	for _, f := range fields {
		switch f.key {
		case "cancelAfter":
			t.CancelAfter = d.duration(f.v, path+".cancelAfter")
		case "timeout":
			t.Timeout = d.duration(f.v, path+".timeout")
		}
	}
	return t
}

package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// obj is a JSON object that keeps its keys in order.
type obj []field

type field struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(textutil.AppendJSONString(nil, f.k))
		b.WriteByte(':')
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.k, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes p in the scenario file's shape, without tokens and
// with every secret masked (the target's, the headers').
func (p Plan) MarshalJSON() ([]byte, error) {
	o := obj{}
	if p.Target != "" {
		// Credentials and secret query parameters of the target are
		// masked: what this writes goes into run directories.
		o = append(o, field{"target", redact.URL(p.Target)})
	}
	o = append(o, field{"timeout", p.Timeout})
	if p.ProtocolVersion != "" {
		o = append(o, field{"protocolVersion", p.ProtocolVersion})
	}
	if len(p.Headers) > 0 {
		o = append(o, field{"headers", redactedHeaders(p.Headers)})
	}
	if p.TokensFile != "" {
		o = append(o, field{"tokensFile", p.TokensFile})
	}
	o = append(o, field{"seed", p.Seed})
	o = append(o, field{"connections", p.connectionsJSON()})
	scen := obj{}
	for _, s := range p.Scenarios {
		scen = append(scen, field{s.Name, s})
	}
	if p.Data != nil {
		o = append(o, field{"data", p.Data})
	}
	o = append(o, field{"scenarios", scen})
	if len(p.Thresholds) > 0 {
		th := obj{}
		for _, t := range p.Thresholds {
			var v any = t.Expression
			if t.AbortOnFail || t.DelayAbortEval != 0 {
				v = obj{{"threshold", t.Expression}, {"abortOnFail", t.AbortOnFail}, {"delayAbortEval", t.DelayAbortEval}}
			}
			if n := len(th); n > 0 && th[n-1].k == t.Metric {
				th[n-1].v = append(th[n-1].v.([]any), v)
			} else {
				th = append(th, field{t.Metric, []any{v}})
			}
		}
		o = append(o, field{"thresholds", th})
	}
	return o.MarshalJSON()
}

// MarshalJSON writes s with exactly the options of its executor.
func (s Scenario) MarshalJSON() ([]byte, error) {
	o := obj{{"executor", s.Executor}}
	add := func(k string, v any) { o = append(o, field{k, v}) }
	for _, k := range ExecutorOptions[s.Executor] {
		add(k, s.Option(k))
	}
	add("startTime", s.StartTime)
	add("gracefulStop", s.GracefulStop)
	if s.Timeout != 0 {
		add("timeout", s.Timeout)
	}
	if s.ProtocolVersion != "" {
		add("protocolVersion", s.ProtocolVersion)
	}
	if s.Cache != "" {
		add("cache", s.Cache)
	}
	if s.Listen {
		add("listen", true)
	}
	add("flow", s.Flow)
	if s.Data != nil {
		add("data", s.Data)
	}
	return o.MarshalJSON()
}

// MarshalJSON writes s as in a scenario file: a bare name ("ping") or a
// one-key object ({"tools/call": {...}}).
func (s Step) MarshalJSON() ([]byte, error) {
	var opts obj
	switch s.Kind {
	case StepThink:
		switch s.Think.Distribution {
		case ThinkUniform:
			return json.Marshal(obj{{StepThink, obj{{ThinkUniform, []Duration{s.Think.Min, s.Think.Max}}}}})
		case ThinkExponential:
			return json.Marshal(obj{{StepThink, obj{{ThinkExponential, s.Think.Duration}}}})
		}
		return json.Marshal(obj{{StepThink, s.Think.Duration}})
	case StepEndSession:
		return json.Marshal(obj{{StepEndSession, obj{{"probability", s.Probability}}}})
	case StepChoose:
		return json.Marshal(obj{{StepChoose, s.Choices}})
	case OpCallTool, OpGetPrompt:
		opts = append(opts, field{"name", s.Name})
		if len(s.Arguments) > 0 {
			opts = append(opts, field{"arguments", s.Arguments})
		}
	case OpReadResource:
		opts = append(opts, field{"uri", s.URI})
	case StepHTTP:
		if s.HTTP != nil {
			opts = append(opts, s.HTTP.fields()...)
		}
	}
	if s.Timeout != 0 {
		opts = append(opts, field{"timeout", s.Timeout})
	}
	if s.AbortAfter != 0 {
		opts = append(opts, field{"abortAfter", s.AbortAfter})
	}
	if s.Inputs != nil {
		opts = append(opts, field{"inputs", s.Inputs})
	}
	if s.Task != nil {
		opts = append(opts, field{"task", s.Task})
	}
	opts = append(opts, answerFields(s)...)
	if len(opts) == 0 {
		return json.Marshal(s.Kind)
	}
	return json.Marshal(obj{{s.Kind, opts}})
}

// secretHeader reports whether a header's value looks like a credential,
// to be redacted wherever the plan is written.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "cookie", "password", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RecordedFile is the file name of a plan read back from a run directory
// (scenariofile.ReadRecorded): its data files are not read again
// (bind.go).
const RecordedFile = "plan (JSON)"

// PlayableFile is the file name of a plan sent to a worker process to
// play (scenariofile.ReadPlayable): as a recorded plan, but its data
// files are read, from the absolute paths its parent gave them.
const PlayableFile = "plan (JSON, to play)"

// redactedHeaders is a copy of headers with secret-looking values masked.
func redactedHeaders(headers map[string]string) map[string]string {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		if secretHeader(k) {
			v = redact.Mask
		}
		out[k] = v
	}
	return out
}

// fields writes an http step's request as in a scenario file, secret-
// looking header values redacted.
func (h *HTTPRequest) fields() obj {
	method := h.Method
	if method == "" {
		method = "GET"
	}
	o := obj{{"method", method}, {"url", h.URL}}
	if h.Name != "" {
		o = append(o, field{"name", h.Name})
	}
	if len(h.Headers) > 0 {
		o = append(o, field{"headers", redactedHeaders(h.Headers)})
	}
	if h.Body != nil {
		o = append(o, field{"body", h.Body})
	}
	if len(h.ExpectStatus) > 0 {
		o = append(o, field{"expectStatus", h.ExpectStatus})
	}
	return o
}

// answerFields writes a step's captures and checks.
func answerFields(s Step) obj {
	var o obj
	if len(s.Captures) > 0 {
		c := obj{}
		for _, x := range s.Captures {
			c = append(c, field{x.Name, x.Path})
		}
		o = append(o, field{"capture", c})
	}
	if len(s.Checks) > 0 {
		var list []any
		for _, c := range s.Checks {
			var v any = c.String()
			if c.Name != "" && c.Name != c.String() {
				v = c.mapping()
			}
			list = append(list, v)
		}
		o = append(o, field{"check", list})
	}
	return o
}

// mapping writes a check as {path, OP: value, name}.
func (c Check) mapping() obj {
	o := obj{{"path", c.Path}}
	switch c.Op {
	case CheckEquals:
		o = append(o, field{"equals", c.Value})
	case CheckNotEquals:
		o = append(o, field{"notEquals", c.Value})
	case CheckContains:
		o = append(o, field{"contains", c.Value})
	case CheckMatches:
		o = append(o, field{"matches", c.Value})
	case CheckExists:
		o = append(o, field{"exists", true})
	case CheckMissing:
		o = append(o, field{"exists", false})
	}
	return append(o, field{"name", c.Name})
}

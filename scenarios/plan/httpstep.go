package plan

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// StepHTTP is a plain HTTP request step (REST, plain JSON-RPC), sent on
// the user's own connection to the target's origin.
const StepHTTP = "http"

// HTTPRequest is what an http step sends. URL, header values and a
// string Body are templates; a Body that is not a string is a JSON
// template, as tools/call arguments are.
type HTTPRequest struct {
	// Method defaults to GET.
	Method string
	// URL is a path ("/api/users/{{data.id}}") on the target's origin, or
	// an absolute URL on that origin.
	URL string
	// Name tags the request's metrics (default: URL as written).
	Name    string
	Headers map[string]string
	// Body is a string (sent as written, Content-Type text/plain unless
	// a header says otherwise), a JSON value (application/json) or nil.
	Body any
	// ExpectStatus lists the statuses that count as success (empty: any
	// 2xx).
	ExpectStatus []int
}

// CompiledHTTP is a checked HTTPRequest.
type CompiledHTTP struct {
	Method string
	// Path is the request target (path and query) on the target's origin.
	Path Text
	Name string
	// Headers, in name order; ContentType is set unless a header gives it.
	Headers     []CompiledHeader
	ContentType string
	// Body: JSONBody (a JSON template) or TextBody, if HasBody.
	HasBody  bool
	JSONBody *Template
	TextBody Text
	// Expect lists the statuses counted as success (nil: 2xx).
	Expect []int
}

// CompiledHeader is one header of an http step.
type CompiledHeader struct {
	Name  string
	Value Text
}

// Expected reports whether status counts as success.
func (h *CompiledHTTP) Expected(status int) bool {
	if len(h.Expect) == 0 {
		return status/100 == 2
	}
	return slices.Contains(h.Expect, status)
}

// stepHeadersReserved are headers an http step cannot set: the transport
// frames the request, and the bearer token comes from tokens.
var stepHeadersReserved = []string{"Host", "Content-Length", "Connection", "Transfer-Encoding", "Authorization"}

func compileHTTP(pe *Problems, target string, st *Step, bd *binder, sp string) *CompiledHTTP {
	h := st.HTTP
	c := &CompiledHTTP{Method: strings.ToUpper(strings.TrimSpace(h.Method)), Name: h.Name}
	if c.Method == "" {
		c.Method = "GET"
	}
	if strings.IndexFunc(c.Method, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 || len(c.Method) > 20 {
		pe.Add(st.line, sp+".method", "%q is not an HTTP method", textutil.Truncate(h.Method, 20))
	}
	path, err := relativeURL(h.URL, target)
	if err != nil {
		pe.Add(st.line, sp+".url", "%v", err)
	} else if c.Path, err = compileText(path); err != nil {
		pe.Add(st.line, sp+".url", "%v", err)
	} else if err = c.Path.bind(bd); err != nil {
		pe.Add(st.line, sp+".url", "%v", err)
	}
	if c.Name == "" {
		c.Name = h.URL
	}
	for _, k := range sortedKeys(h.Headers) {
		hp := sp + ".headers." + textutil.Truncate(k, 40)
		switch {
		case k == "" || strings.IndexFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) }) >= 0:
			pe.Add(st.line, hp, "not a valid header name")
			continue
		case slices.ContainsFunc(stepHeadersReserved, func(r string) bool { return strings.EqualFold(r, k) }):
			pe.Add(st.line, hp, "set by the client itself (the bearer token comes from tokens)")
			continue
		case strings.ContainsAny(h.Headers[k], "\r\n\x00"):
			pe.Add(st.line, hp, "value contains a line break or NUL")
			continue
		}
		v, err := compileText(h.Headers[k])
		if err == nil {
			err = v.bind(bd)
		}
		if err != nil {
			pe.Add(st.line, hp, "%v", err)
			continue
		}
		c.Headers = append(c.Headers, CompiledHeader{Name: k, Value: v})
	}
	switch b := h.Body.(type) {
	case nil:
	case string:
		c.HasBody, c.ContentType = true, "text/plain; charset=utf-8"
		if c.TextBody, err = compileText(b); err == nil {
			err = c.TextBody.bind(bd)
		}
	default:
		c.HasBody, c.ContentType = true, "application/json"
		if c.JSONBody, err = compileValue(b, false, 0); err == nil {
			err = c.JSONBody.bind(bd)
		}
	}
	if err != nil && h.Body != nil {
		pe.Add(st.line, sp+".body", "%v", err)
	}
	if slices.ContainsFunc(c.Headers, func(x CompiledHeader) bool { return strings.EqualFold(x.Name, "Content-Type") }) {
		c.ContentType = ""
	}
	for _, s := range h.ExpectStatus {
		if s < 100 || s > 599 {
			pe.Add(st.line, sp+".expectStatus", "%d is not an HTTP status (100-599)", s)
		}
	}
	c.Expect = h.ExpectStatus
	return c
}

// relativeURL turns an http step's URL into a request target on the
// plan's target origin: a path is kept, an absolute URL must be on that
// origin (requests go on the user's own connection to it).
func relativeURL(raw, target string) (string, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", fmt.Errorf("missing; want a path such as /api/items or an absolute URL on the target's origin")
	case strings.HasPrefix(raw, "/"):
		return raw, nil
	case !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://"):
		return "", fmt.Errorf("%q: want a path starting with / or an http(s) URL", textutil.Truncate(raw, 60))
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	host, path, _ := strings.Cut(rest, "/")
	if strings.Contains(host, "{{") {
		return "", fmt.Errorf("%q: the origin cannot be a template; only the path can", textutil.Truncate(raw, 60))
	}
	if target != "" {
		t, err := url.Parse(target)
		if err == nil && (!strings.EqualFold(t.Scheme, scheme) || !strings.EqualFold(t.Host, host)) {
			return "", fmt.Errorf("%q is not on the target's origin %s://%s: http steps travel on the user's own connection to the target; give a path", textutil.Truncate(raw, 60), t.Scheme, t.Host)
		}
	}
	return "/" + path, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// compileAnswerRules compiles a request step's captures and checks; the
// captures are bound after the step's own templates, so a step cannot use
// what it captures itself.
func compileAnswerRules(pe *Problems, cs *CompiledScenario, st *Step, c *CompiledStep, bd *binder, sp string) {
	if len(st.Captures) > maxCaptures {
		pe.Add(st.line, sp+".capture", "%d captures; at most %d", len(st.Captures), maxCaptures)
	}
	for _, cp := range st.Captures {
		switch {
		case !varName.MatchString(cp.Name):
			pe.Add(st.line, sp+".capture", "name %q: want letters, digits and '_', not starting with a digit", textutil.Truncate(cp.Name, 40))
			continue
		}
		if err := CheckPath(cp.Path); err != nil {
			pe.Add(st.line, sp+".capture."+cp.Name, "%v", err)
			continue
		}
		c.Captures = append(c.Captures, CompiledCapture{Name: cp.Name, Path: cp.Path, Slot: bd.capture(cp.Name)})
	}
	if len(st.Checks) > maxChecksByStep {
		pe.Add(st.line, sp+".check", "%d checks; at most %d", len(st.Checks), maxChecksByStep)
	}
	for i, ch := range st.Checks {
		cc, err := compileCheck(ch)
		if err != nil {
			pe.Add(st.line, fmt.Sprintf("%s.check[%d]", sp, i), "%v", err)
			continue
		}
		cc.ID = slices.Index(cs.Checks, cc.Name)
		if cc.ID < 0 {
			cc.ID = len(cs.Checks)
			cs.Checks = append(cs.Checks, cc.Name)
		}
		c.Checks = append(c.Checks, cc)
	}
	cs.Vars = bd.names
}

package mcp

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Trace context. A request whose context holds a valid OpenTelemetry span
// context (trace.ContextWithSpanContext) carries it as W3C Trace Context:
// the traceparent (and tracestate, when there is one) HTTP headers, and the
// same values in params._meta, which MCP 2026-07-28 reserves for them
// (SEP-414). Services that use sqlcommenter carry it on into their SQL,
// where leakbench's probe reads it back. A list request that follows
// nextCursor pages sends every page with the same traceparent.
//
// The values are made by OpenTelemetry's propagator, not formatted here;
// the carrier lives in the Session, so that injecting costs no allocation
// beyond the propagator's own string.

var propagator = propagation.TraceContext{}

// traceCarrier receives what the propagator injects.
type traceCarrier struct{ parent, state string }

func (c *traceCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.parent
	case "tracestate":
		return c.state
	}
	return ""
}

func (c *traceCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.parent = value
	case "tracestate":
		c.state = value
	}
}

func (c *traceCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// inject sets the session's carrier from ctx: empty when ctx has no span
// context.
func (s *Session) inject(ctx context.Context) {
	s.trace = traceCarrier{}
	propagator.Inject(ctx, &s.trace)
}

// appendParams appends `,"params":` and params (a JSON object, or nil) to
// body, with the trace context in its _meta when the session has one, and
// the 2026-07-28 members (era.go) when the request speaks that revision.
func (s *Session) appendParams(body, params []byte) []byte {
	if s.trace.parent == "" && s.meta == nil {
		if params != nil {
			body = append(body, `,"params":`...)
			body = append(body, params...)
		}
		return body
	}
	body = append(body, `,"params":{"_meta":{`...)
	body = append(body, s.meta...)
	if s.trace.parent != "" {
		if s.meta != nil {
			body = append(body, ',')
		}
		body = append(body, `"traceparent":"`...)
		body = append(body, s.trace.parent...) // W3C form: hex and dashes, nothing to escape
		body = append(body, '"')
		if s.trace.state != "" {
			body = append(body, `,"tracestate":`...)
			body = textutil.AppendJSONString(body, s.trace.state)
		}
	}
	body = append(body, '}')
	if len(params) > 1 {
		rest := params[1:] // params is an object: after its '{'
		if !isEmptyObjectTail(rest) {
			body = append(body, ',')
		}
		return append(body, rest...)
	}
	return append(body, '}')
}

// isEmptyObjectTail: rest is what follows an object's '{' and the object
// is empty ("}" after optional blanks).
func isEmptyObjectTail(rest []byte) bool {
	for _, c := range rest {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '}':
			return true
		}
		return false
	}
	return false
}

// appendTraceHeaders appends the trace context's header lines.
func (s *Session) appendTraceHeaders(h []byte) []byte {
	if s.trace.parent == "" {
		return h
	}
	h = append(h, "Traceparent: "...)
	h = append(h, s.trace.parent...)
	h = append(h, "\r\n"...)
	if s.trace.state != "" {
		h = append(h, "Tracestate: "...)
		h = append(h, s.trace.state...)
		h = append(h, "\r\n"...)
	}
	return h
}

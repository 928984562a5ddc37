package mcp

import (
	"context"
	"encoding/hex"

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

// traceIDs is a trace context set by the caller (SetTrace) rather than
// carried by a context: rendered straight into the request, so that a
// traced request costs neither a context nor a string.
type traceIDs struct {
	trace [16]byte
	span  [8]byte
	set   bool
}

// SetTrace makes the requests that follow carry the trace context of
// trace id tid and span id sid, sampled (W3C traceparent
// 00-TID-SID-01), instead of their contexts' span contexts, until
// ClearTrace: all the round trips of one step, in the engine's use. The
// ids must not be all zero.
func (s *Session) SetTrace(tid [16]byte, sid [8]byte) {
	s.ids = traceIDs{trace: tid, span: sid, set: true}
}

// ClearTrace ends what SetTrace set: requests carry their contexts'
// span contexts again.
func (s *Session) ClearTrace() { s.ids.set = false }

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
	if !s.ids.set {
		propagator.Inject(ctx, &s.trace)
	}
}

// traced reports whether the request being built carries a trace context.
func (s *Session) traced() bool { return s.ids.set || s.trace.parent != "" }

// appendTraceparent appends the request's traceparent value.
func (s *Session) appendTraceparent(b []byte) []byte {
	if !s.ids.set {
		return append(b, s.trace.parent...)
	}
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, s.ids.trace[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, s.ids.span[:])
	return append(b, "-01"...)
}

// appendParams appends `,"params":` and params (a JSON object, or nil) to
// body, with the trace context in its _meta when the session has one, and
// the 2026-07-28 members (era.go) when the request speaks that revision.
func (s *Session) appendParams(body, params []byte) []byte {
	if !s.traced() && s.meta == nil {
		if params != nil {
			body = append(body, `,"params":`...)
			body = append(body, params...)
		}
		return body
	}
	body = append(body, `,"params":{"_meta":{`...)
	body = append(body, s.meta...)
	if s.traced() {
		if s.meta != nil {
			body = append(body, ',')
		}
		body = append(body, `"traceparent":"`...)
		body = s.appendTraceparent(body) // W3C form: hex and dashes, nothing to escape
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
	if !s.traced() {
		return h
	}
	h = append(h, "Traceparent: "...)
	h = s.appendTraceparent(h)
	h = append(h, "\r\n"...)
	if s.trace.state != "" {
		h = append(h, "Tracestate: "...)
		h = append(h, s.trace.state...)
		h = append(h, "\r\n"...)
	}
	return h
}

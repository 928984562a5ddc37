package mcp

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// One request on the wire: the JSON-RPC body, the HTTP head every MCP
// request carries, and the answer read back (response.go parses it).
// Plain HTTP steps (answer.go) and notification streams (listen.go) share
// the head and the checks before sending.

// call sends a JSON-RPC request with the given params (raw JSON, or nil)
// and decodes its result into out (if non-nil). op is also the method;
// name is what its Mcp-Name header carries in the 2026-07-28 era (the
// tool's or prompt's name, the resource's URI; "" for other methods). It
// returns the answer's Mcp-Session-Id.
func (s *Session) call(ctx context.Context, op, name string, params []byte, out any) (string, error) {
	s.nextID++
	id := s.nextID
	s.last = nil
	if s.x != nil {
		s.x.pending, s.x.pendingType, s.x.cached = nil, "", false
	}
	s.inject(ctx)
	// The body, _meta included, is built in a pooled buffer: the
	// transport copies it out before send returns.
	bb := getBuf()
	body := append((*bb)[:0], `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":"`...)
	body = append(body, op...) // one of our own method constants: no escaping needed
	body = append(body, '"')
	body = s.appendParams(body, params) // with the trace context (and 2026-07-28's members) in _meta
	body = append(body, '}')
	if s.meta != nil {
		s.rpcMethod, s.name = op, name
	}
	// A request whose context has already ended is not sent: there is
	// nothing to cancel then.
	live := ctx.Err() == nil
	resp, w, err := s.send(ctx, op, http.MethodPost, body, true)
	putBuf(bb, body)
	s.trace, s.rpcMethod, s.name = traceCarrier{}, "", "" // only this request's headers carry them
	if err != nil {
		if !live {
			return "", err
		}
		return "", s.gaveUp(ctx, id, op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", s.statusError(op, resp)
	}
	mediaType := baseMediaType(resp.ContentType)
	rr, err := parseResponse(mediaType, resp.Body, id)
	if err != nil {
		return "", s.gaveUp(ctx, id, op, s.bodyError(ctx, w, op, err))
	}
	if mediaType == mediaSSE {
		// Let the stream end so the connection can be reused, but do not
		// wait for a server that keeps it open: past the grace, the read
		// fails and the connection is closed, never pooled.
		w.Shorten(drainGrace)
		drain(resp.Body)
	}
	if rr.Error != nil {
		return "", &Error{Kind: KindJSONRPC, Op: op, Code: rr.Error.Code, Msg: s.redact(s.sessionHint(textutil.Truncate(rr.Error.Message, 200)))}
	}
	if s.meta != nil {
		rt, err := s.modernAnswer(op, rr.Result, resp.SessionID)
		if err != nil {
			return "", err
		}
		if rt != "" { // input_required or a task: the caller goes on (roundtrips.go)
			s.ext().pending, s.x.pendingType = rr.Result, rt
			return resp.SessionID, nil
		}
		if s.cache {
			s.noteTTL(op, rr.Result) // cache.go
		}
	}
	if s.keep || s.rawOnce {
		s.last = rr.Result // a copy of its own (decodeMessage)
	}
	if out != nil {
		if err := unmarshalResult(rr.Result, out); err != nil {
			return "", &Error{Kind: KindProtocol, Op: op, Msg: s.redact("malformed " + op + " result: " + jsonErrMsg(err))}
		}
	}
	return resp.SessionID, nil
}

// send sends one HTTP request under the per-request timeout, or under the
// scenario's abortAfter delay if abortable and that comes first. On success
// the caller must close the body, which ends the request; the watch tells
// whether its deadline fired, and can abort it.
//
// A 401 to a token from a bearer.RefreshingTokenSource (expired early,
// revoked) is not the answer yet: the token is dropped and the request
// sent once more, under the same deadline, with a new one; a second 401
// is the answer, and statusError counts it as KindAuth. A 401 is a
// refusal before any work, so sending again is safe.
func (s *Session) send(ctx context.Context, op, method string, body []byte, abortable bool) (*h1.Response, *h1.Watch, error) {
	s.refused = false
	if e := s.ready(ctx, op); e != nil {
		return nil, nil, e
	}
	deadline, cause := s.deadline(abortable)
	for retried := false; ; retried = true {
		hb := headBufs.Get().(*[]byte)
		h := s.appendSessionHead(append((*hb)[:0], s.c.head...), body != nil)
		s.sessioned = s.id != ""
		h = s.appendTraceHeaders(h)
		h = s.appendStandardHeaders(h)
		resp, w, err := s.c.tr.RoundTrip(ctx, s.slot, deadline, cause, method, h, body)
		*hb = h
		headBufs.Put(hb)
		if err != nil {
			// A malformed head is quoted in the error, and the target may
			// have echoed the token into it.
			return nil, nil, s.scrub(transportError(ctx, w.Expired(), op, err))
		}
		if resp.StatusCode != http.StatusUnauthorized || s.tokens == nil {
			return resp, w, nil
		}
		rts, ok := s.tokens.(bearer.RefreshingTokenSource)
		if retried || !ok {
			s.refused = retried
			return resp, w, nil
		}
		drain(resp.Body)
		resp.Body.Close()
		rts.Invalidate(s.token)
		if e := s.ready(ctx, op); e != nil { // fetches the new token
			return nil, nil, e
		}
	}
}

// ready checks that a request of op can be sent — a usable target and
// extra headers, a token without line breaks, ctx still live — and takes
// the session's bearer token from its token source, if it has one. Every
// way out of the session (MCP requests, http steps, notification streams)
// passes here.
func (s *Session) ready(ctx context.Context, op string) *Error {
	switch {
	case s.c.tr == nil:
		return &Error{Kind: KindProtocol, Op: op, Msg: "target is not an http(s) URL"}
	case s.c.headErr != nil:
		return &Error{Kind: KindProtocol, Op: op, Msg: s.c.headErr.Error()}
	case s.badToken:
		return &Error{Kind: KindProtocol, Op: op, Msg: "bearer token contains a line break"}
	case ctx.Err() != nil:
		return &Error{Kind: KindCanceled, Op: op, Err: context.Cause(ctx)}
	}
	if s.tokens != nil {
		tok, err := s.tokens.Token(ctx)
		if err != nil {
			return &Error{Kind: KindAuth, Op: op, Msg: redact.String(err.Error())}
		}
		if strings.ContainsAny(tok, "\r\n") {
			return &Error{Kind: KindAuth, Op: op, Msg: "the token endpoint's access token contains a line break"}
		}
		s.token = tok
	}
	return nil
}

// deadline is when a request being sent now is given up, and what that
// means: the per-request timeout (the session's, else the client's), or
// the scenario's abortAfter delay when abortable and sooner.
func (s *Session) deadline(abortable bool) (time.Time, error) {
	timeout, cause := s.c.timeout, errRequestTimeout
	if s.timeout > 0 {
		timeout = s.timeout
	}
	if abortable && s.abortAfter > 0 && s.abortAfter < timeout {
		timeout, cause = s.abortAfter, errAborted
	}
	return time.Now().Add(timeout), cause
}

// appendAuth appends the session's Authorization header line, if it has
// a token.
func (s *Session) appendAuth(h []byte) []byte {
	if s.token == "" {
		return h
	}
	h = append(h, "Authorization: Bearer "...)
	h = append(h, s.token...)
	return append(h, "\r\n"...)
}

// appendSessionHead appends the header lines of an MCP request after the
// client's own: Content-Type (when it has a body), Authorization,
// Mcp-Session-Id and Mcp-Protocol-Version.
func (s *Session) appendSessionHead(h []byte, hasBody bool) []byte {
	if hasBody {
		h = append(h, "Content-Type: application/json\r\n"...)
	}
	h = s.appendAuth(h)
	if s.id != "" {
		h = append(h, "Mcp-Session-Id: "...)
		h = append(h, s.id...)
		h = append(h, "\r\n"...)
	}
	if s.version != "" {
		h = append(h, "Mcp-Protocol-Version: "...)
		h = append(h, s.version...)
		h = append(h, "\r\n"...)
	}
	return h
}

var headBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// bufs recycles the buffers request bodies and params are built in, so
// that a request allocates none (getBuf, putBuf).
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

// putBuf gives back bp, holding b (bp's buffer, perhaps grown), unless it
// grew too large to keep alive.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		bufs.Put(bp)
	}
}

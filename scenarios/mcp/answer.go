package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// KeepResults makes the session keep the JSON-RPC result of each request
// (Result), for a scenario's captures and checks; off, nothing of an
// answer is kept.
func (s *Session) KeepResults(keep bool) { s.keep, s.last = keep, nil }

// Result returns the JSON-RPC result of the last request (the last page
// of a */list; a tools/call result with isError: true too), or nil when
// it got none or KeepResults is off. It stays valid until the next
// request.
func (s *Session) Result() []byte { return s.last }

// HTTPRequest is a plain HTTP request sent on a session's connection to
// another path of the target's origin.
type HTTPRequest struct {
	Method string
	// Path is the request target: path and query, starting with "/".
	Path string
	// Headers are header lines, each "Name: value\r\n", after the client's
	// own (User-Agent, the plan's headers, Authorization).
	Headers []byte
	Body    []byte // nil: none
}

// HTTPResponse is the answer to an HTTPRequest.
type HTTPResponse struct {
	Status int
	Body   []byte
}

// mcpAccept is the client's own Accept header line, which a plain HTTP
// request leaves out.
const mcpAccept = "Accept: application/json, text/event-stream\r\n"

// HTTP sends a plain HTTP request (not JSON-RPC: no session id, no
// protocol version) on the session's connection, with the session's
// bearer token, and reads its answer (at most MaxBodyBytes). Any status is
// an answer; what counts as success is the caller's to say. The error is
// an *Error for a request that got no answer. The body is appended to
// buf[:0] (reused from call to call).
func (s *Session) HTTP(ctx context.Context, req HTTPRequest, buf []byte) (HTTPResponse, error) {
	const op = "http"
	if e := s.ready(ctx, op); e != nil {
		return HTTPResponse{}, e
	}
	deadline, cause := s.deadline(true)
	hb := headBufs.Get().(*[]byte)
	h := (*hb)[:0]
	head := s.c.head
	if i := bytes.Index(head, []byte(mcpAccept)); i >= 0 {
		h = append(append(h, head[:i]...), head[i+len(mcpAccept):]...)
	} else {
		h = append(h, head...)
	}
	h = s.appendAuth(h)
	h = append(h, req.Headers...)
	// The trace context, as on MCP requests (trace.go): a service's SQL
	// can carry it back to the probe.
	s.inject(ctx)
	h = s.appendTraceHeaders(h)
	s.trace = traceCarrier{}
	resp, w, err := s.c.tr.RoundTripPath(ctx, s.slot, deadline, cause, req.Method, req.Path, h, req.Body)
	*hb = h
	headBufs.Put(hb)
	if err != nil {
		return HTTPResponse{}, s.scrub(transportError(ctx, w.Expired(), op, err))
	}
	defer resp.Body.Close()
	b, err := readBody(resp.Body, buf[:0], MaxBodyBytes)
	if err != nil {
		return HTTPResponse{Body: b}, s.bodyError(ctx, w, op, err)
	}
	return HTTPResponse{Status: resp.StatusCode, Body: b}, nil
}

// readBody reads a whole body into b, at most max bytes: past them it
// fails with a *tooLargeError.
func readBody(r io.Reader, b []byte, max int64) ([]byte, error) {
	lr := &limitedReader{r: r, n: max, limit: max}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

package mcp

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"unicode"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Error kinds: a small closed set, so that results from different runs and
// different targets can be compared kind by kind. Every error returned by a
// [Session] is an [*Error] carrying one of them; [Classify] maps any error to
// one of them.
const (
	// KindTimeout: our per-request timeout fired and the client gave up
	// (and closed the request, which the target observes).
	KindTimeout = "timeout"
	// KindHTTP: the target answered with a non-2xx status ([Error.Status]).
	KindHTTP = "http"
	// KindJSONRPC: the target answered with a JSON-RPC error object ([Error.Code]).
	KindJSONRPC = "jsonrpc"
	// KindTool: tools/call returned a result with isError: true.
	KindTool = "tool"
	// KindConn: the connection failed otherwise: closed early (EOF), the
	// network unreachable, a dial that timed out.
	KindConn = "conn"
	// KindConnRefused: the target refused the connection (nothing listens).
	KindConnRefused = "conn_refused"
	// KindConnReset: the target (or a middlebox) reset the connection.
	KindConnReset = "conn_reset"
	// KindTLS: the TLS handshake failed (unknown authority, name mismatch,
	// a plain-HTTP port).
	KindTLS = "tls"
	// KindDNS: the target's name did not resolve.
	KindDNS = "dns"
	// KindAuth: no bearer token could be had — the OAuth token endpoint
	// refused the client credentials or could not be reached — or the
	// target answered 401 to a token fetched anew after its first 401
	// ([Error.Status] 401).
	KindAuth = "auth"
	// KindProtocol: the answer was not valid JSON, SSE or JSON-RPC, or
	// broke the MCP Streamable HTTP rules.
	KindProtocol = "protocol"
	// KindTooLarge: an answer body passed MaxBodyBytes, or a line of an
	// event stream (an answer's, a notification stream's) passed
	// MaxLineBytes; the client stopped reading there and closed the
	// connection. Apart from protocol: it is what a hostile or runaway
	// server that would exhaust the client's memory looks like.
	KindTooLarge = "too_large"
	// KindCapture: the answer came, but a capture of the step found
	// nothing in it, or the step needs a variable no capture has set yet
	// (the request is then not sent).
	KindCapture = "capture"
	// KindAborted: the scenario itself gave up on the request after its
	// abortAfter delay and closed the connection, as a user abandoning a
	// slow call does. It is a fault the scenario injects on purpose, so it
	// is counted apart and is not a failure of the target.
	KindAborted = "aborted"
	// KindCanceled: the run's own context ended; not a failure of the target.
	KindCanceled = "canceled"
)

// Kinds lists every error kind, in a stable order.
var Kinds = kindList[:]

var kindList = [...]string{KindTimeout, KindHTTP, KindJSONRPC, KindTool, KindConn, KindConnRefused, KindConnReset,
	KindTLS, KindDNS, KindAuth, KindProtocol, KindTooLarge, KindCapture, KindAborted, KindCanceled}

// IsConnKind reports whether kind is one of the connection failures
// (conn, conn_refused, conn_reset, tls, dns).
func IsConnKind(kind string) bool {
	switch kind {
	case KindConn, KindConnRefused, KindConnReset, KindTLS, KindDNS:
		return true
	}
	return false
}

// NumKinds is the number of error kinds.
const NumKinds = len(kindList)

// KindIndex returns the position of kind in [Kinds], from 0; kinds are
// counted in arrays of NumKinds. An unknown kind (never returned by
// [Classify]) is counted as the last.
func KindIndex(kind string) int {
	for i, k := range kindList {
		if k == kind {
			return i
		}
	}
	return NumKinds - 1
}

// ErrSessionExpired matches (with [errors.Is]) an HTTP 404 answer to a request
// that carried an Mcp-Session-Id: the target forgot the session and the client
// must initialize again.
var ErrSessionExpired = errors.New("mcp session expired")

// Error is the error returned by every [Session] method.
type Error struct {
	Kind   string // one of the Kind constants
	Op     string // the MCP method ("initialize", "tools/call", ...), or "close"
	Status int    // HTTP status, for KindHTTP and a target's KindAuth; for KindJSONRPC, the 4xx a 2026-07-28 error came with (0: 200)
	Code   int64  // JSON-RPC error code, for KindJSONRPC; for KindHTTP, the code of a JSON-RPC error in the body (0: none)
	Msg    string // short human-readable detail; never contains the bearer token
	Err    error  // underlying error, if any

	expired bool          // 404 on a request that carried a session id
	notice  NoticeOutcome // a notifications/cancelled for the request given up (cancel.go)
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Kind)
	switch e.Kind {
	case KindHTTP:
		fmt.Fprintf(&b, " %d", e.Status)
	case KindJSONRPC:
		fmt.Fprintf(&b, " %d", e.Code)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e matches target; it makes errors.Is(err,
// ErrSessionExpired) work.
func (e *Error) Is(target error) bool {
	return target == ErrSessionExpired && e.expired
}

// Classify returns the kind of err: one of the Kind constants, or "" for nil.
// Errors that did not come from a [Session] are classified by what they wrap;
// anything unrecognized is KindProtocol.
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var tl *tooLargeError
	switch {
	case errors.As(err, &tl):
		return KindTooLarge
	case errors.Is(err, errAborted):
		return KindAborted
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, errRequestTimeout):
		return KindTimeout
	}
	if k := connKind(err); k != "" {
		return k
	}
	return KindProtocol
}

// connKind returns the connection-failure kind of err, or "" if err is
// not one.
func connKind(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *h1.TLSError
	var recErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	switch {
	case errors.As(err, &dnsErr):
		return KindDNS
	case errors.As(err, &tlsErr), errors.As(err, &recErr), errors.As(err, &certErr), errors.As(err, &alert):
		return KindTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindConnRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return KindConnReset
	case isConnError(err):
		return KindConn
	}
	return ""
}

// errRequestTimeout is the cause set on a request's context when our
// per-request timeout fires, so that it can be told apart from the run ending.
var errRequestTimeout = errors.New("request timeout")

// errAborted is the cause set on a request's context when the scenario's
// abortAfter delay fires.
var errAborted = errors.New("aborted by the scenario (abortAfter)")

// isConnError reports whether err is a transport-level failure.
func isConnError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// transportError wraps an error from sending a request or reading its body.
// ctx is the caller's context; expired is the cause set when the request's
// own deadline fired (errRequestTimeout or errAborted), nil if it did not.
func transportError(ctx context.Context, expired error, op string, err error) *Error {
	switch {
	case ctx.Err() != nil:
		return &Error{Kind: KindCanceled, Op: op, Err: context.Cause(ctx)}
	case errors.Is(expired, errRequestTimeout):
		return &Error{Kind: KindTimeout, Op: op, Err: errRequestTimeout}
	case errors.Is(expired, errAborted):
		return &Error{Kind: KindAborted, Op: op, Err: errAborted}
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return &Error{Kind: KindProtocol, Op: op, Msg: pe.msg}
	}
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return &Error{Kind: KindTooLarge, Op: op, Msg: tl.Error()}
	}
	if k := connKind(err); k != "" {
		return &Error{Kind: k, Op: op, Err: err}
	}
	// An error from the HTTP client that is neither a network error nor
	// ours (e.g. a malformed response status line) is a protocol error.
	return &Error{Kind: KindProtocol, Op: op, Err: err}
}

// protocolError is a malformed answer found by the response parser.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

func protocolErrorf(format string, args ...any) error {
	return &protocolError{msg: fmt.Sprintf(format, args...)}
}

// tooLargeError is an answer body, a line or an event that passed its
// bound (KindTooLarge).
type tooLargeError struct {
	what  string // "answer body", "event stream line", "an event of the stream"
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s exceeds %d bytes (a bound of the client)", e.what, e.limit)
}

// statusError builds the error for a non-2xx answer, with a sanitized
// snippet of its body for diagnosis.
func (s *Session) statusError(op string, resp *h1.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, rpcErrorLen))
	drain(resp.Body)
	e := &Error{Kind: KindHTTP, Op: op, Status: resp.StatusCode, Msg: s.redact(s.sessionHint(snippet(body)))}
	// A 2026-07-28 server answers a request it rejects with 4xx and a
	// JSON-RPC error (an unknown tool, UnsupportedProtocolVersion,
	// HeaderMismatch, ...): its code tells a modern server from a legacy
	// one (era.go), and for a 2026-07-28 request it is the answer — a
	// JSON-RPC error, as the same refusal is in the 2025 era, so that runs
	// of both eras compare kind by kind.
	if baseMediaType(resp.ContentType) == mediaJSON {
		var m struct {
			JSONRPC string    `json:"jsonrpc"`
			Error   *rpcError `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil && m.JSONRPC == "2.0" && m.Error != nil {
			e.Code = m.Error.Code
			if s.meta != nil && resp.StatusCode/100 == 4 {
				e.Kind, e.Msg = KindJSONRPC, s.redact(s.sessionHint(textutil.Truncate(m.Error.Message, 200)))
			}
		}
	}
	if resp.StatusCode == http.StatusNotFound && s.sessioned {
		e.expired = true
	}
	if resp.StatusCode == http.StatusUnauthorized && s.refused {
		// A 401 to a token fetched anew for this request (send): the
		// credentials, not the token's age, are what the target refuses.
		e.Kind = KindAuth
		e.Msg = s.redact("the target refused a freshly fetched token too (HTTP 401): " + s.sessionHint(snippet(body)))
	}
	return e
}

// bodyError classifies a failure while reading an answer body.
func (s *Session) bodyError(ctx context.Context, w *h1.Watch, op string, err error) error {
	return s.scrub(transportError(ctx, w.Expired(), op, err))
}

// scrub removes the session's bearer token from e's message and from the
// text of the error it wraps (which then no longer unwraps: its kind is
// already decided).
func (s *Session) scrub(e *Error) *Error {
	e.Msg = s.redact(e.Msg)
	if e.Err != nil && s.token != "" {
		if msg := e.Err.Error(); s.redact(msg) != msg {
			e.Err = errors.New(s.redact(msg))
		}
	}
	return e
}

// redact removes the session's bearer token from text that came from the
// target (a hostile or careless server may echo it back, whole or cut
// before a "…"), and any other secret redact finds.
func (s *Session) redact(text string) string { return redact.Literal(text, s.token) }

// snippetLen bounds how much of an answer an error quotes.
const snippetLen = 256

// rpcErrorLen bounds how much of an error answer is read to find a
// JSON-RPC error in it.
const rpcErrorLen = 4 << 10

// snippet is the start of an answer, printable on one line, for an error
// to quote (not yet redacted).
func snippet(b []byte) string {
	msg := cleanSnippet(b[:min(len(b), snippetLen)])
	if len(b) > snippetLen {
		msg += "…" // marks the cut, so that redact.Literal sees a token cut there
	}
	return msg
}

// cleanSnippet makes a body prefix printable on one line.
func cleanSnippet(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b))
	return strings.Join(strings.Fields(s), " ")
}

// drain reads what is left of a body (up to a bound), so that the
// keep-alive connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, drainLimit)) }

// baseMediaType returns the lower-case media type without parameters.
func baseMediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

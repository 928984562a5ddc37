package mcp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Cancellation as each era asks of a client that gives up on a request
// (its abortAfter delay, the request timeout, the caller's context):
//
//   - 2025 era: the client sends notifications/cancelled with the
//     request's id and a reason, then stops waiting — as the go-sdk and
//     TypeScript SDK clients do. Over Streamable HTTP the notice is a POST
//     of its own, carrying the session's Mcp-Session-Id; the connection
//     that carried the request is closed either way.
//   - 2026-07-28: closing the response stream IS the cancellation ("No
//     notifications/cancelled message is required or expected"), so none
//     is sent.
//
// The initialize request is never cancelled by a notice (the spec forbids
// it), and in 2026-07-28 a task is cancelled with tasks/cancel
// (roundtrips.go), not with a notice.

// NoticeOutcome says whether a notifications/cancelled went out for a
// request the client gave up on, and how the server took it.
type NoticeOutcome uint8

const (
	// NoNotice: none was sent (2026-07-28, initialize, or the request was
	// not given up).
	NoNotice NoticeOutcome = iota
	// NoticeAccepted: sent, and the server answered 2xx.
	NoticeAccepted
	// NoticeRefused: sent, and the server answered with an error (an HTTP
	// error status): counted, never the step's failure.
	NoticeRefused
	// NoticeFailed: it could not be delivered within cancelNoticeTimeout
	// (no connection, no answer).
	NoticeFailed
)

// cancelNoticeTimeout bounds a notice: the user's loop waits for it, and
// a notice is a courtesy to the server, not worth more of the user's time
// than a session's close (closeTimeout in the engine).
const cancelNoticeTimeout = 500 * time.Millisecond

// CancelNoticeOf returns what the client did about a request err gave
// up on: [NoNotice] unless err is an [*Error] after which a
// notifications/cancelled was sent (or tried).
func CancelNoticeOf(err error) NoticeOutcome {
	var e *Error
	if errors.As(err, &e) {
		return e.notice
	}
	return NoNotice
}

// gaveUp is called with the error a request id of op ended with: when it
// is the client giving up (KindTimeout, KindAborted, KindCanceled) in the
// 2025 era, the server is told with notifications/cancelled. It returns
// err, whose [*Error] records the notice's outcome. By then the request's
// connection is closed (its deadline or ctx closed it): the client has
// stopped waiting before it tells the server.
func (s *Session) gaveUp(ctx context.Context, id int64, op string, err error) error {
	var e *Error
	if !errors.As(err, &e) || s.era != Era2025 || s.meta != nil || op == methodInitialize {
		return err
	}
	var reason string
	switch e.Kind {
	case KindAborted:
		reason = "the client gave up on the request (abortAfter)"
	case KindTimeout:
		reason = "request timed out"
	case KindCanceled:
		reason = "the client stopped"
	default:
		return err
	}
	e.notice = s.cancelNotice(ctx, id, reason)
	return e
}

// cancelNotice POSTs notifications/cancelled for request id, under its own
// short deadline, whatever ctx's state (the notice is how the client
// tells the server it stopped, which it may have done because ctx ended).
func (s *Session) cancelNotice(ctx context.Context, id int64, reason string) NoticeOutcome {
	body := make([]byte, 0, 128)
	body = append(body, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"reason":`...)
	body = textutil.AppendJSONString(body, reason)
	body = append(body, "}}"...)
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNoticeTimeout)
	defer cancel()
	timeout := s.timeout
	s.timeout = cancelNoticeTimeout
	resp, _, err := s.send(nctx, methodCancelled, http.MethodPost, body, false)
	s.timeout = timeout
	if err != nil {
		return NoticeFailed
	}
	defer resp.Body.Close()
	drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		return NoticeRefused
	}
	return NoticeAccepted
}

// methodCancelled is the notice's method, and its op in errors.
const methodCancelled = "notifications/cancelled"

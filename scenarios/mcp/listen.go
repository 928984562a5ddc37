package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// A listening user keeps a notification stream open beside its requests,
// as an MCP host does to hear of list changes:
//   - 2026-07-28: a subscriptions/listen request (SEP-2575) whose SSE
//     answer stays open; the server acknowledges the subscription, then
//     sends the notifications asked for;
//   - 2025: the session's standalone GET stream; when its events carry
//     ids, a dropped stream is resumed with Last-Event-ID.
// The stream has a connection of its own (a user's requests keep theirs)
// and is read by the caller's goroutine; a Listener is made on the user's
// goroutine from the session as it then is, so that the two never share
// mutable state.

// MethodListen is the 2026-07-28 method that opens a notification
// stream; it is also the Op of its errors, and the method tag of both
// eras' streams.
const MethodListen = "subscriptions/listen"

// ErrNoStream: the server offers no notification stream (405 to the GET,
// or a method-not-found error to subscriptions/listen).
var ErrNoStream = errors.New("the server offers no notification stream")

// listenRetry is the pause before a stream that ended is opened again
// (or resumed), unless the server set its own with an SSE retry field,
// which is kept within [minListenRetry, maxListenRetry] so that a server
// dropping streams at once cannot make the user spin.
const (
	listenRetry    = time.Second
	minListenRetry = 10 * time.Millisecond
	maxListenRetry = time.Minute
)

// ListenHooks are told what a Listener's streams do; they are called
// from the goroutine running Listen. Nil hooks are skipped.
type ListenHooks struct {
	Opened  func(took time.Duration) // a stream was opened (answered with an event stream), in took
	Message func(method string)      // a notification arrived (its method)
	Resumed func()                   // a 2025 stream was reopened with Last-Event-ID (after Opened)
}

// Listener is one user's notification stream.
type Listener struct {
	s           Session // a copy: the session's target, credentials and era when made
	slot        *h1.Slot
	hooks       ListenHooks
	lastEventID string
	retry       time.Duration // the pause before reconnecting (the server's SSE retry, else listenRetry)
	// changed is the session's cache's invalidation bits (cache.go): a
	// list_changed notification makes the cached list stale at once.
	changed *atomic.Uint32
	// maxLine and maxEvent bound a line of the stream and an event's
	// data: MaxLineBytes and MaxBodyBytes (smaller in the fuzz test).
	maxLine, maxEvent int
}

// Listener returns a listener for the session as it is now (initialized:
// its era, session id and token are what the stream sends).
func (s *Session) Listener(hooks ListenHooks) *Listener {
	l := &Listener{s: *s, slot: new(h1.Slot), hooks: hooks, retry: listenRetry, changed: &s.ext().cache.changed,
		maxLine: MaxLineBytes, maxEvent: MaxBodyBytes}
	l.s.x, l.s.keep, l.s.last, l.s.slot, l.s.ids = nil, false, nil, l.slot, traceIDs{}
	return l
}

// Listen keeps the stream open until ctx ends (returning nil), opening it
// again after the server's SSE retry delay (else a second) when it ends,
// and resuming a 2025 stream from the last event id it saw. It returns ErrNoStream when the server offers none,
// and an *Error when the server refuses it otherwise.
func (l *Listener) Listen(ctx context.Context) error {
	defer l.slot.Close()
	for ctx.Err() == nil {
		err := l.stream(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrNoStream):
			return err
		case err != nil && !streamDropped(err):
			return err
		}
		if !sleepCtx(ctx, l.retry) {
			return nil
		}
	}
	return nil
}

// streamDropped reports whether err is a stream that ended under the
// client (a reset, an EOF): open it again, not a refusal.
func streamDropped(err error) bool {
	var e *Error
	return !errors.As(err, &e) || IsConnKind(e.Kind)
}

// stream opens the stream once and reads it to its end.
func (l *Listener) stream(ctx context.Context) error {
	s := &l.s
	op, method, era2026 := MethodListen, http.MethodGet, s.era == Era2026
	var body []byte
	if era2026 {
		method = http.MethodPost
		s.nextID++
		body = append(body, `{"jsonrpc":"2.0","id":`...)
		body = strconv.AppendInt(body, s.nextID, 10)
		body = append(body, `,"method":"`+MethodListen+`","params":{"_meta":{`...)
		body = append(body, s.meta...)
		body = append(body, `},"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}}`...)
	}
	if era2026 {
		l.lastEventID = "" // a subscriptions/listen request is new each time: nothing to resume
	}
	resuming := l.lastEventID != ""
	head, err := l.head(ctx, op, era2026, body != nil)
	if err != nil {
		return err
	}
	start := time.Now()
	// The stream stays open as long as the user does: no deadline but
	// ctx's end.
	resp, _, err := s.c.tr.RoundTrip(ctx, l.slot, time.Now().Add(24*time.Hour), errRequestTimeout, method, head, body)
	if err != nil {
		return s.scrub(transportError(ctx, nil, op, err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed && !era2026:
		drain(resp.Body)
		return ErrNoStream
	case resp.StatusCode/100 != 2:
		err := s.statusError(op, resp)
		if e := (*Error)(nil); errors.As(err, &e) && e.Code == codeMethodNotFound {
			return ErrNoStream
		}
		return err
	case baseMediaType(resp.ContentType) != mediaSSE:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, rpcErrorLen))
		if era2026 && gjson.GetBytes(b, "error.code").Int() == codeMethodNotFound {
			return ErrNoStream
		}
		return &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf("the stream answered %q, not text/event-stream: %s",
			textutil.Truncate(resp.ContentType, 64), snippet(b)))}
	}
	if l.hooks.Opened != nil {
		l.hooks.Opened(time.Since(start))
	}
	if resuming && l.hooks.Resumed != nil {
		l.hooks.Resumed()
	}
	return l.read(op, resp.Body)
}

// codeMethodNotFound is JSON-RPC's error for an unknown method.
const codeMethodNotFound = -32601

// head builds the stream request's header lines, as send does for a
// request.
func (l *Listener) head(ctx context.Context, op string, era2026, hasBody bool) ([]byte, error) {
	s := &l.s
	if e := s.ready(ctx, op); e != nil {
		return nil, e
	}
	h := s.appendSessionHead(append([]byte(nil), s.c.head...), hasBody)
	if era2026 {
		h = append(h, "Mcp-Method: "+MethodListen+"\r\n"...)
	}
	if l.lastEventID != "" {
		h = append(h, "Last-Event-ID: "...)
		h = append(h, l.lastEventID...) // checked for line breaks when read
		h = append(h, "\r\n"...)
	}
	return h, nil
}

// read reads the stream's events until it ends: each notification's
// method goes to the Message hook; the answer to subscriptions/listen
// (the server closing the subscription) ends it. An event id is kept to
// resume from.
func (l *Listener) read(op string, body io.Reader) error {
	// The stream has no end, so no body bound: each line is bounded
	// (maxLine) and each event's data (maxEvent), so that what is held
	// at once stays within them.
	br := bufio.NewReaderSize(body, 4096)
	var scratch, data []byte
	for {
		line, err := readLine(br, &scratch, l.maxLine)
		var tl *tooLargeError
		if errors.As(err, &tl) {
			return &Error{Kind: KindTooLarge, Op: op, Msg: tl.Error()}
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && len(data) > 0:
			if done := l.dispatch(data); done {
				return nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data)+len(v) > l.maxEvent {
				return &Error{Kind: KindTooLarge, Op: op, Msg: (&tooLargeError{what: "an event of the stream", limit: int64(l.maxEvent)}).Error()}
			}
			data = append(data, v...)
		case bytes.HasPrefix(line, []byte("retry:")):
			if ms, err := strconv.Atoi(string(bytes.TrimSpace(bytes.TrimPrefix(line, []byte("retry:"))))); err == nil {
				l.retry = min(max(time.Duration(ms)*time.Millisecond, minListenRetry), maxListenRetry)
			}
		case bytes.HasPrefix(line, []byte("id:")):
			id := string(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("id:")), []byte(" ")))
			if !strings.ContainsAny(id, "\r\n\x00") && len(id) <= 256 {
				l.lastEventID = id
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the server ended the stream: open it again
			}
			return &Error{Kind: Classify(err), Op: op, Err: err}
		}
	}
}

// dispatch handles one event's data: a notification (counted), or the
// answer that closes a subscriptions/listen stream (done).
func (l *Listener) dispatch(data []byte) (done bool) {
	if !gjson.ValidBytes(data) {
		return false // not JSON: a server's keep-alive or comment
	}
	m := gjson.ParseBytes(data)
	if method := m.Get("method"); method.Type == gjson.String && !m.Get("id").Exists() {
		if bit := changedBit(method.Str); bit != 0 {
			l.changed.Or(bit)
		}
		if l.hooks.Message != nil {
			l.hooks.Message(method.String())
		}
		return false
	}
	return m.Get("result").Exists() || m.Get("error").Exists()
}

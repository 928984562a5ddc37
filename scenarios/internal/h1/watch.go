// A request's watch and body, and how its end is decided: the answer read
// to its end (the connection goes back for the next request), or the
// request aborted under the caller (its context ended, its deadline
// passed, or the caller gave up), which closes the connection and keeps
// it out of the pool for good.
//
// All of it lives in the connection and is reused from one request to
// the next, which makes the engine's hot path allocation-free here: the
// deadline is the connection's own (SetDeadline: a blocked read or write
// fails when it passes, and the request is aborted then), not a timer of
// the request's; and the context registration that aborts the request
// when its context ends is kept from one request to the next while their
// contexts end together.

package h1

import (
	"context"
	"errors"
	"io"
	"time"
)

// The phase of a connection's request, in the low bits of pconn.state
// (the high bits tag it with the context registration it is under, so that
// the callback of a registration given up cannot abort a later request).
const (
	phaseIdle uint32 = 0 // no request, or it ended with the connection intact
	phaseBusy uint32 = 1 // a request is in flight
	phaseDead uint32 = 2 // aborted: the connection is (being) closed, never reused
)

// Watch is a request's hold on its connection: it tells whether the
// deadline passed, and lets the caller abort the request. It belongs to
// the connection, and is valid until the response's body is closed.
type Watch struct {
	pc       *pconn // nil when no connection was had
	cause    error  // what the deadline means, as the caller named it
	deadline time.Time
}

// callbackDone, when set (by a test, before any connection), runs at the
// end of every context callback: a test makes the callback slow to see
// that close waits for it. Nil in the program.
var callbackDone func()

// begin starts a request on pc: its watch, and the abort when ctx ends.
// The caller must then check ctx.Err(): a context that ended before the
// phase was set may have found no request to abort.
func (pc *pconn) begin(ctx context.Context, deadline time.Time, cause error) *Watch {
	pc.w = Watch{pc: pc, cause: cause, deadline: deadline}
	if done := ctx.Done(); done != pc.done {
		// Another context (or the first): its callback replaces the old
		// one, which may still run (Stop failing) but finds its tag stale.
		pc.unregister()
		pc.reg++
		pc.done = done
		if done != nil {
			reg := pc.reg
			pc.callbacks.Add(1)
			pc.stopCtx = context.AfterFunc(ctx, func() {
				defer pc.callbacks.Done()
				pc.cancel(reg)
				if h := callbackDone; h != nil {
					h()
				}
			})
		}
	}
	pc.state.Store(pc.reg<<2 | phaseBusy)
	return &pc.w
}

// cancel aborts the request in flight under registration reg, if any:
// the context ended. A connection idle at that moment is left as it is.
func (pc *pconn) cancel(reg uint32) {
	if busy := reg<<2 | phaseBusy; pc.state.CompareAndSwap(busy, busy|phaseDead) {
		_ = pc.c.Close()
	}
}

// release ends the request; it reports whether the connection is intact:
// nothing aborted the request (its context, its deadline, the caller).
func (pc *pconn) release() bool {
	busy := pc.reg<<2 | phaseBusy
	return pc.state.CompareAndSwap(busy, busy&^phaseBusy)
}

// readResponse reads the answer into the connection's own response.
func (pc *pconn) readResponse(method string) (*Response, error) {
	return &pc.resp, readResponseInto(pc.br, method, &pc.resp, &pc.lb, &pc.sid)
}

// Abort closes the request's connection under it.
func (w *Watch) Abort() {
	if w.pc != nil {
		w.pc.state.Or(phaseDead)
		_ = w.pc.c.Close()
	}
}

// Expired returns the deadline's cause if it has passed, else nil.
func (w *Watch) Expired() error {
	if !time.Now().Before(w.deadline) {
		return w.cause
	}
	return nil
}

// MarkDead keeps the connection out of the pool: the caller is aborting
// the request itself (a timer of its own that could not be stopped).
func (w *Watch) MarkDead() {
	if w.pc != nil {
		w.pc.state.Or(phaseDead)
	}
}

// Shorten brings the request's deadline forward to d from now, if that
// is sooner: when it passes, a blocked read fails and the request is
// aborted. Unlike the request's own deadline it is not reported by
// Expired: the caller chose to stop waiting (for the end of an SSE
// stream whose answer it already has).
func (w *Watch) Shorten(d time.Duration) {
	if t := time.Now().Add(d); w.pc != nil && t.Before(w.deadline) {
		if w.pc.c.SetDeadline(t) != nil {
			w.Abort()
		}
	}
}

// respBody gives the connection back to the pool once the body was read
// to its end and closed, unless the request was aborted meanwhile.
type respBody struct {
	rc        io.ReadCloser
	pc        *pconn
	t         *Transport
	slot      *Slot
	keep, eof bool
	closed    bool
}

func (b *respBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.eof = true
	case err != nil:
		// A deadline passed (the connection's, set by the request), or
		// the body is cut short or misframed: the connection is done
		// for, so close it now rather than when the caller closes the
		// body, as the request's abort would.
		b.pc.w.Abort()
	}
	return n, err
}

func (b *respBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	pc := b.pc
	if !b.eof {
		// An unread rest (a stream still open): the connection cannot be
		// reused. Close it first, so that closing the body does not wait
		// to drain it.
		pc.release()
		pc.close()
		_ = b.rc.Close()
		return nil
	}
	_ = b.rc.Close()
	if pc.release() && b.keep {
		b.t.put(pc, b.slot)
	} else {
		pc.close()
	}
	return nil
}

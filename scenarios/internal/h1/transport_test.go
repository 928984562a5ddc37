package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAbortedRequestIsNotPooled: a connection closed under its request
// (the SSE drain timer firing as the stream ends) never goes back to the
// pool, where the next request would fail on it.
func TestAbortedRequestIsNotPooled(t *testing.T) {
	for _, aborted := range []bool{false, true} {
		c1, c2 := net.Pipe()
		tr := &Transport{maxIdle: 1}
		pc := &pconn{c: c1}
		w := pc.begin(context.Background(), time.Now().Add(time.Hour), nil)
		if aborted {
			w.Abort()
		}
		pc.body = respBody{rc: noBody{}, pc: pc, t: tr, keep: true, eof: true}
		_ = pc.body.Close()
		if pooled := len(tr.idle) == 1; pooled == aborted {
			t.Errorf("aborted %v: pooled %v", aborted, pooled)
		}
		tr.CloseIdle()
		c2.Close()
	}
}

// TestStaleCancelAbortsNothing: the callback of a context registration the
// connection gave up (its context ended as the next request, under
// another context, began) does not abort that next request.
func TestStaleCancelAbortsNothing(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	pc := &pconn{c: c1}
	ctxA, cancelA := context.WithCancel(context.Background())
	pc.begin(ctxA, time.Now().Add(time.Hour), nil)
	if !pc.release() {
		t.Fatal("first request not intact")
	}
	regA := pc.reg
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	pc.begin(ctxB, time.Now().Add(time.Hour), nil)
	cancelA()
	pc.cancel(regA) // as A's callback would, had it started before begin stopped it
	if !pc.release() {
		t.Fatal("the request under B was aborted by A's callback")
	}
	pc.close()
	if pc.stopCtx != nil {
		t.Error("the registration outlives the connection")
	}
}

// TestCloseWaitsForCallback: a connection whose context ended (a run's
// end) is closed only once the context's callback has finished: ending
// the context starts the callback in a goroutine of its own, and a run
// must not return while one of its goroutines still works. The callback
// is made slow here (callbackDone), so that a close that did not wait
// would return before it is done, every round.
func TestCloseWaitsForCallback(t *testing.T) {
	var finished atomic.Bool
	callbackDone = func() {
		time.Sleep(20 * time.Millisecond)
		finished.Store(true)
	}
	t.Cleanup(func() { callbackDone = nil })
	for i := range 10 {
		finished.Store(false)
		c1, c2 := net.Pipe()
		pc := &pconn{c: c1}
		ctx, cancel := context.WithCancel(context.Background())
		pc.begin(ctx, time.Now().Add(time.Hour), nil)
		pc.release()
		cancel() // starts the callback: too late for close to stop it
		pc.close()
		c2.Close()
		if !finished.Load() {
			t.Fatalf("round %d: close returned before the context's callback had finished", i)
		}
	}
}

// server is a loopback HTTP/1.1 server counting its connections; handle
// answers each request (nil: 200 with a small JSON body).
type server struct {
	ln      net.Listener
	accepts atomic.Int32
	h       atomic.Pointer[handler]
	conns   sync.Map // open connections, closed when the test ends
	wg      sync.WaitGroup
}

type handler func(c net.Conn, req *http.Request)

// handle sets how the server answers from now on.
func (s *server) handle(h handler) { s.h.Store(&h) }

func newServer(t *testing.T, handle handler) (*server, *Transport) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln}
	s.handle(handle)
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			s.conns.Store(c, true)
			s.wg.Go(func() { s.serve(c) })
		}
	})
	u, _ := url.Parse("http://" + ln.Addr().String() + "/mcp")
	tr := New(u, time.Second, 4, nil)
	t.Cleanup(func() {
		ln.Close()
		tr.CloseIdle()
		// The server's goroutines end with the test (TestMain checks).
		s.conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		s.wg.Wait()
	})
	return s, tr
}

// hang is a handler's not answering: it waits until the client closes the
// connection (giving up) or the test ends, at most 2 s.
func hang(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.Copy(io.Discard, c)
}

func (s *server) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		h := *s.h.Load()
		if h == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: 2\r\n\r\n{}")
			continue
		}
		h(c, req)
	}
}

var errCause = errors.New("the test's deadline")

// roundTrip sends one request and reads its body to the end; it returns
// the watch's Expired after an error.
func roundTrip(ctx context.Context, tr *Transport, slot *Slot, timeout time.Duration) (string, error, error) {
	resp, w, err := tr.RoundTrip(ctx, slot, time.Now().Add(timeout), errCause, "POST", []byte("Content-Type: application/json\r\n"), []byte("{}"))
	if err != nil {
		return "", w.Expired(), err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", w.Expired(), err
	}
	if resp.SessionID != "s-1" || resp.ContentType != "application/json" {
		return "", nil, errors.New("wrong headers: " + resp.SessionID + " " + resp.ContentType)
	}
	return string(b), nil, nil
}

// TestConnectionReused: requests in turn share one connection, a slot's
// as the pool's, each with its own deadline (the last one's, long past
// when the connection sits idle, does not fail the next).
func TestConnectionReused(t *testing.T) {
	for _, own := range []bool{true, false} {
		s, tr := newServer(t, nil)
		var slot *Slot
		if own {
			slot = new(Slot)
		}
		ctx, cancel := context.WithCancel(context.Background())
		for i := range 5 {
			if i == 4 {
				time.Sleep(peekAfterIdle + 100*time.Millisecond) // idle long enough to be looked at
			}
			timeout := 50 * time.Millisecond
			if i%2 == 1 {
				timeout = time.Second
			}
			if b, _, err := roundTrip(ctx, tr, slot, timeout); err != nil || b != "{}" {
				t.Fatalf("own %v, request %d: %q %v", own, i, b, err)
			}
			if i == 1 {
				time.Sleep(100 * time.Millisecond) // the first deadline passes, the connection idle
			}
		}
		cancel()
		if n := s.accepts.Load(); n != 1 {
			t.Errorf("own %v: %d connections for 5 requests, want 1", own, n)
		}
		slot.Close()
	}
}

// TestDeadline: a server that does not answer, or stops halfway through
// the body, fails the request at its deadline with the deadline's cause,
// and the connection is not reused.
func TestDeadline(t *testing.T) {
	for _, half := range []bool{false, true} {
		s, tr := newServer(t, func(c net.Conn, req *http.Request) {
			if half {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			}
			hang(c)
		})
		slot := new(Slot)
		start := time.Now()
		_, expired, err := roundTrip(context.Background(), tr, slot, 100*time.Millisecond)
		if took := time.Since(start); err == nil || !errors.Is(expired, errCause) || took < 100*time.Millisecond || took > time.Second {
			t.Errorf("half %v: err %v, expired %v after %v", half, err, expired, took)
		}
		if slot.pc != nil {
			t.Errorf("half %v: the connection was kept", half)
		}
		s.handle(nil)
		if _, _, err := roundTrip(context.Background(), tr, slot, time.Second); err != nil {
			t.Fatal(err)
		}
		if n := s.accepts.Load(); n != 2 {
			t.Errorf("half %v: %d connections, want 2", half, n)
		}
		slot.Close()
	}
}

// TestContextEnds: a context ending mid-request aborts it at once, with
// no deadline reported, and its connection is closed; a context that
// ended while the connection sat idle fails the next request under it,
// but leaves the connection to requests under other contexts.
func TestContextEnds(t *testing.T) {
	block := make(chan struct{})
	s, tr := newServer(t, func(c net.Conn, req *http.Request) {
		<-block
	})
	defer close(block)
	slot := new(Slot)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, expired, err := roundTrip(ctx, tr, slot, 5*time.Second)
	if took := time.Since(start); err == nil || expired != nil || took > 2*time.Second {
		t.Errorf("err %v, expired %v after %v", err, expired, took)
	}
	if slot.pc != nil {
		t.Error("the aborted connection was kept")
	}

	s.handle(nil)
	ctx, cancel = context.WithCancel(context.Background())
	if _, _, err := roundTrip(ctx, tr, slot, time.Second); err != nil {
		t.Fatal(err)
	}
	cancel() // while idle: the registration fires, finding no request
	time.Sleep(10 * time.Millisecond)
	if _, _, err := roundTrip(ctx, tr, slot, time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("a request under the ended context: %v", err)
	}
	if _, _, err := roundTrip(context.Background(), tr, slot, time.Second); err != nil {
		t.Fatal(err)
	}
	if n := s.accepts.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (the aborted one, the one closed by the canceled request, the last)", n)
	}
	slot.Close()
}

// TestShorten: a stream left open after its answer is given up at the
// shortened deadline, not reported as the request's, and its connection
// is not reused.
func TestShorten(t *testing.T) {
	s, tr := newServer(t, func(c net.Conn, req *http.Request) {
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata:\n\r\n")
		hang(c)
	})
	slot := new(Slot)
	resp, w, err := tr.RoundTrip(context.Background(), slot, time.Now().Add(5*time.Second), errCause, "POST", nil, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	if _, err := io.ReadFull(resp.Body, b[:]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w.Shorten(50 * time.Millisecond)
	_, err = io.Copy(io.Discard, resp.Body)
	if took := time.Since(start); err == nil || took > time.Second || w.Expired() != nil {
		t.Errorf("err %v after %v, expired %v", err, took, w.Expired())
	}
	resp.Body.Close()
	if slot.pc != nil {
		t.Error("the connection was kept")
	}
	s.handle(nil)
	if _, _, err := roundTrip(context.Background(), tr, slot, time.Second); err != nil {
		t.Fatal(err)
	}
	slot.Close()
}

// TestLargeRequest: a request larger than the socket's buffer (the first
// write cannot take it all) is still sent whole, and answered.
func TestLargeRequest(t *testing.T) {
	var got atomic.Int64
	s, tr := newServer(t, func(c net.Conn, req *http.Request) {
		got.Store(req.ContentLength)
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: 2\r\n\r\n{}")
	})
	slot := new(Slot)
	defer slot.Close()
	body := make([]byte, 16<<20)
	for range 2 {
		resp, _, err := tr.RoundTrip(context.Background(), slot, time.Now().Add(10*time.Second), errCause, "POST", nil, body)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "{}" || got.Load() != int64(len(body)) {
			t.Fatalf("%q %v; the server read %d bytes", b, err, got.Load())
		}
		resp.Body.Close()
	}
	if n := s.accepts.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// TestIdleConnectionHoldsNoReadBuffer: a connection going idle with
// nothing buffered gives its read buffer back (thousands of thinking users
// hold none), takes one again for its next request, and one holding bytes
// the server sent past its answer keeps them for the next read.
func TestIdleConnectionHoldsNoReadBuffer(t *testing.T) {
	_, tr := newServer(t, nil)
	slot := new(Slot)
	defer slot.Close()
	for i := range 3 {
		if b, _, err := roundTrip(context.Background(), tr, slot, time.Second); err != nil || b != "{}" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
		if slot.pc == nil {
			t.Fatalf("request %d: the connection was not kept", i)
		}
		if slot.pc.br != nil {
			t.Fatalf("request %d: the idle connection holds a read buffer of %d bytes", i, slot.pc.br.Size())
		}
	}

	c1, c2 := net.Pipe()
	defer c2.Close()
	pc := &pconn{c: c1}
	pc.takeReader()
	go func() { _, _ = c2.Write([]byte("early")) }()
	if _, err := pc.br.Peek(5); err != nil {
		t.Fatal(err)
	}
	(&Transport{maxIdle: 1}).put(pc, &Slot{})
	if pc.br == nil {
		t.Fatal("a connection holding 5 unread bytes gave its buffer back: the bytes are lost")
	}
	if got, _ := pc.br.Peek(5); string(got) != "early" {
		t.Fatalf("buffered bytes %q, want early", got)
	}
}

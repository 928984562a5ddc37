// Package h1 is a minimal HTTP/1.1 client transport for the load
// generator, one origin per [Transport].
//
// Why not net/http: measured side by side on the same endpoint, a
// connection per user, users sending the engine's tools/call back to back
// (BenchmarkTransportVsNetHTTP, 2026-12-01, 64 and 256 users, on a 2-core
// machine that also runs the server), net/http's Transport spends about
// four times this transport's CPU per request (35–43 µs against 8–11; 71
// allocations against 0.03–0.12), and this transport reaches 1.3–2.4× its
// rate: 0.84–1.14× wrk's against net/http's 0.39–0.68×, before the engine
// adds its own work, where the engine must reach 0.5× wrk. Measured again
// on 2026-12-02, once a request's socket calls were raw (package nbio):
// 14–17 µs against 38–58, 2.1–2.2× net/http's rate, 0.81× wrk's. net/http hands
// every request between three goroutines (the caller, and a read loop and
// a write loop per connection) and keeps two goroutines and two buffers
// per pooled connection; for a load generator that is most of its CPU per
// request. Here a request is written and its answer read on the caller's
// goroutine, over a keep-alive connection taken from a LIFO pool; a pooled
// connection is one socket, one read buffer and what its
// requests reuse (watch.go: no allocation per request). A caller
// may instead hold a connection of its own (a [Slot]): a virtual user
// does, as a real client keeps its own connection. Response
// framing (Content-Length, chunked, close-delimited; 1xx answers skipped)
// is read by response.go, held to net/http's reading by a fuzz test. When
// the request's context ends or its deadline passes, its connection is
// closed, as a client giving up does. A request is sent again, once, on a
// new connection only when not a byte of it was written on the kept-alive
// one (as net/http): one written and then unanswered fails, since the
// server may have run it.
package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	idleConnTimeout = 90 * time.Second
	peekAfterIdle   = time.Millisecond // see get
	readBufferSize  = 4 << 10
)

// Resolver resolves the names transports dial (nil: the system's). Tests
// point it at a DNS server of their own on loopback, so that a name that
// does not resolve asks no one else.
var Resolver *net.Resolver

// Transport sends requests to one origin. It is safe for concurrent use.
type Transport struct {
	addr    string // host:port to dial
	host    string // Host header
	path    string // request target
	tlsConf *tls.Config
	dialer  net.Dialer
	maxIdle int
	// sources, if set, are dialers each bound to one source address,
	// taken in turn: one source address reaches one target address and
	// port at most once per local port (ip_local_port_range), so a run
	// past that count spreads its connections over several.
	sources []net.Dialer
	next    atomic.Uint32

	mu   sync.Mutex
	idle []*pconn // most recently used last
}

// pconn is one keep-alive connection, and what its requests use: one
// request at a time, so its watch, body and response are allocated once
// per connection instead of once per request (watch.go).
type pconn struct {
	c         net.Conn
	br        *bufio.Reader // reads pc (Read), so that it can write first
	raw       syscall.RawConn
	pending   []byte // a request to write before reading (writeRead)
	rio       rawIO
	idleSince time.Time
	reused    bool

	w    Watch
	body respBody
	lb   lengthBody
	resp Response

	// The context registration that aborts the request in flight when
	// its context ends. It outlives the request: the next one whose
	// context ends with the same Done channel (a virtual user's next
	// request, under the same run) keeps it instead of registering again,
	// which costs an allocation and a map entry in the parent context.
	done    <-chan struct{}
	stopCtx func() bool
	// callbacks counts registrations whose callback may still run:
	// close waits for them, so that no goroutine of the connection
	// outlives it (a run's end cancels its context, which starts the
	// callbacks in goroutines of their own, racing the run's return).
	callbacks sync.WaitGroup
	reg       uint32        // counts registrations: the callback's tag
	state     atomic.Uint32 // reg<<2 | phase (watch.go)
	sid       string        // the last Mcp-Session-Id read, reused while it repeats
}

// Read reads the connection for br; a request pending is written first,
// in the same wait (writeRead), when the socket is a plain TCP one.
func (pc *pconn) Read(p []byte) (int, error) {
	if b := pc.pending; b != nil {
		pc.pending = nil
		return pc.writeRead(b, p)
	}
	return pc.c.Read(p)
}

// close closes the connection and drops its context registration, which
// would otherwise stay in a long-lived parent context (the run's).
func (pc *pconn) close() {
	pc.unregister()
	_ = pc.c.Close()
	pc.callbacks.Wait()
}

// unregister drops the context registration, if any; a callback it was
// too late to stop is left to run (and to mark itself done).
func (pc *pconn) unregister() {
	if pc.stopCtx != nil {
		if pc.stopCtx() {
			pc.callbacks.Done() // it will never run
		}
		pc.stopCtx = nil
	}
}

// New returns a transport for the origin of u (http or https) that keeps
// up to maxIdle idle connections in its shared pool; dialTimeout bounds a
// dial and its TLS handshake. For https, tlsConf (nil: the system roots)
// is cloned, with the server name and ALPN set here.
func New(u *url.URL, dialTimeout time.Duration, maxIdle int, tlsConf *tls.Config) *Transport {
	t := &Transport{host: u.Host, path: u.RequestURI(), maxIdle: maxIdle,
		dialer: net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Resolver: Resolver}}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		if tlsConf == nil {
			tlsConf = &tls.Config{}
		}
		t.tlsConf = tlsConf.Clone()
		if t.tlsConf.ServerName == "" {
			t.tlsConf.ServerName = u.Hostname()
		}
		t.tlsConf.NextProtos = []string{"http/1.1"}
		t.tlsConf.MinVersion = max(t.tlsConf.MinVersion, tls.VersionTLS12)
	}
	return t
}

// SetSourceAddrs makes the transport dial from addrs, one after the other
// (nil: the address the kernel picks). Call it before the first request.
func (t *Transport) SetSourceAddrs(addrs []netip.Addr) {
	t.sources = nil
	for _, a := range addrs {
		d := t.dialer
		d.LocalAddr = &net.TCPAddr{IP: a.AsSlice()}
		d.Control = bindNoPort // the port chosen at connect, not at bind
		t.sources = append(t.sources, d)
	}
}

// dialerFor is the dialer of the next connection.
func (t *Transport) dialerFor() *net.Dialer {
	if n := uint32(len(t.sources)); n > 0 {
		return &t.sources[t.next.Add(1)%n]
	}
	return &t.dialer
}

// Slot holds one caller's own keep-alive connection, instead of the
// shared pool: a virtual user's, as a real client has. Its zero value is
// empty (the next request dials). It is not safe for concurrent use: one
// request at a time. Close it when done: until then its connection stays
// registered with the context of its last request (to abort a request
// under it), which keeps it reachable while that context lives.
type Slot struct{ pc *pconn }

// Close closes the slot's connection, if it holds one.
func (s *Slot) Close() {
	if s != nil && s.pc != nil {
		s.pc.close()
		s.pc = nil
	}
}

// CloseIdle closes every pooled connection.
func (t *Transport) CloseIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, pc := range idle {
		pc.close()
	}
}

// get takes the slot's connection (slot non-nil) or a pooled one if it
// is live, or dials one before deadline; the connection's deadline is
// set to deadline.
func (t *Transport) get(ctx context.Context, slot *Slot, deadline time.Time) (*pconn, error) {
	for {
		var pc *pconn
		if slot != nil {
			pc, slot.pc = slot.pc, nil
		} else {
			t.mu.Lock()
			if n := len(t.idle); n > 0 {
				pc = t.idle[n-1]
				t.idle[n-1] = nil
				t.idle = t.idle[:n-1]
			}
			t.mu.Unlock()
		}
		if pc == nil {
			break
		}
		// A request written on a connection the server closed while idle
		// is not sent again (resendable), so the close must be seen
		// before writing, as net/http's read loop sees it: a server's
		// idle timeout, or its graceful shutdown closing idle connections
		// at any moment. The look (a syscall) is skipped only for a
		// connection idle under peekAfterIdle: a user sending back to
		// back pays nothing, and a server that closes within a
		// millisecond of its answer without saying Connection: close is
		// the race net/http loses too. The deadline is set first: the
		// last request's, long past, would fail the look.
		idle := time.Since(pc.idleSince)
		if pc.c.SetDeadline(deadline) == nil && idle < idleConnTimeout && (idle < peekAfterIdle || !peerClosed(pc.c)) {
			pc.reused = true
			pc.takeReader()
			return pc, nil
		}
		pc.close()
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	c, err := t.dialerFor().DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	if t.tlsConf != nil {
		tc := tls.Client(c, t.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, &TLSError{Err: err}
		}
		c = tc
	}
	if err := c.SetDeadline(deadline); err != nil {
		_ = c.Close()
		return nil, err
	}
	pc := &pconn{c: c, raw: rawConn(c)}
	pc.takeReader()
	return pc, nil
}

// readers pools the connections' read buffers. A connection holds one
// only while a request is on it: going idle with nothing buffered, it
// gives its buffer back. Thousands of users thinking between requests
// then hold no 4 KiB buffer each — that buffer was a third of an active
// user's live heap (#28) — and the few in flight share a handful.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// takeReader gives the connection a read buffer, if it has none.
func (pc *pconn) takeReader() {
	if pc.br == nil {
		pc.br = readers.Get().(*bufio.Reader)
		pc.br.Reset(pc)
	}
}

// dropReader gives the connection's read buffer back when it holds no
// bytes (a server that sent more than its answer keeps it). Only the
// connection's owner calls it, going idle: no body reads it any more.
func (pc *pconn) dropReader() {
	if pc.br != nil && pc.br.Buffered() == 0 {
		pc.br.Reset(nil)
		readers.Put(pc.br)
		pc.br = nil
	}
}

// TLSError is a failed TLS handshake (an unknown authority, a name
// mismatch, a server that does not speak TLS).
type TLSError struct{ Err error }

func (e *TLSError) Error() string { return "TLS handshake: " + e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

func (t *Transport) put(pc *pconn, slot *Slot) {
	pc.idleSince = time.Now()
	pc.dropReader()
	if slot != nil {
		slot.pc = pc
		return
	}
	t.mu.Lock()
	if len(t.idle) < t.maxIdle {
		t.idle = append(t.idle, pc)
		pc = nil
	}
	t.mu.Unlock()
	if pc != nil {
		pc.close()
	}
}

// RoundTrip sends one request (head: its header lines, each ending in
// CRLF, after the request line) and reads the answer's head, all before
// deadline (whose passing means cause), over slot's connection (nil: the
// shared pool's). The caller must close the body, once, which releases
// the watch and ends the request; the response, its body and the watch
// belong to the connection, which the next request reuses, so none of
// them may be used after that. The returned watch also tells, after an
// error, whether the deadline passed.
func (t *Transport) RoundTrip(ctx context.Context, slot *Slot, deadline time.Time, cause error, method string, head, body []byte) (*Response, *Watch, error) {
	return t.RoundTripPath(ctx, slot, deadline, cause, method, t.path, head, body)
}

// RoundTripPath is RoundTrip to another request target (path and query)
// on the same origin: a scenario's plain HTTP steps.
func (t *Transport) RoundTripPath(ctx context.Context, slot *Slot, deadline time.Time, cause error, method, path string, head, body []byte) (*Response, *Watch, error) {
	for attempt := 0; ; attempt++ {
		pc, err := t.get(ctx, slot, deadline)
		if err != nil {
			return nil, &Watch{cause: cause, deadline: deadline}, err
		}
		w := pc.begin(ctx, deadline, cause)
		if err = ctx.Err(); err == nil {
			err = t.send(pc, method, path, head, body)
		}
		if err != nil {
			intact := pc.release()
			pc.close()
			if intact && ctx.Err() == nil && pc.reused && attempt == 0 && resendable(err) {
				continue
			}
			return nil, w, err
		}
		resp, err := pc.readResponse(method)
		if err != nil {
			pc.release()
			pc.close()
			return nil, w, err
		}
		pc.body = respBody{rc: resp.Body, pc: pc, t: t, slot: slot, keep: !resp.close, eof: resp.length == 0}
		resp.Body = &pc.body
		return resp, w, nil
	}
}

// resendable reports whether a request that failed with err on a reused
// connection may be sent once more on a new one: only when not a byte of
// it was written, on a connection found broken (the server closed or reset
// it while idle, and the kernel knew before our write), as net/http
// resends. Once the request is written, a connection that ends without a
// byte of an answer may have had it read and run: a server that ran a
// tools/call and then closed would see it twice, and the forensics join
// two requests under one trace id. That failure is the caller's to count
// (#26). The race net/http has too remains: a server closing the
// connection as our request leaves.
func resendable(err error) bool {
	var nw *nothingWrittenError
	return errors.As(err, &nw) && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

// nothingWrittenError is a request's failed write that put not a byte of
// it on the connection.
type nothingWrittenError struct{ err error }

func (e *nothingWrittenError) Error() string { return e.err.Error() }
func (e *nothingWrittenError) Unwrap() error { return e.err }

// send writes the request line, Host, head, Content-Length and body in
// one write (one syscall, and one segment for a small request), and waits
// for the answer's first byte.
func (t *Transport) send(pc *pconn, method, path string, head, body []byte) error {
	buf := reqBufs.Get().(*[]byte)
	b := append((*buf)[:0], method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	b = append(b, "\r\n"...)
	b = append(b, head...)
	if body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	var err error
	if pc.raw != nil && pc.br.Buffered() == 0 {
		pc.pending = b // written by the read below, in its wait
		_, err = pc.br.Peek(1)
		pc.pending = nil
	} else if n, werr := pc.c.Write(b); werr != nil {
		err = werr
		if n == 0 { // through TLS: no whole record, nothing the server can read
			err = &nothingWrittenError{werr}
		}
	} else {
		_, err = pc.br.Peek(1)
	}
	*buf = b
	if cap(b) <= 64<<10 {
		reqBufs.Put(buf)
	}
	return err
}

var reqBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

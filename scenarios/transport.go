package scenarios

// A minimal HTTP/1.1 client transport for the load generator.
//
// net/http's Transport hands every request between three goroutines (the
// caller, and a read loop and a write loop per connection) and keeps two
// goroutines and two buffers per pooled connection. For a load generator
// that is most of its CPU per request, and it halves the rate it can
// drive. Here a request is written and its answer read on the caller's
// goroutine, over a keep-alive connection taken from a LIFO pool; a pooled
// connection is one socket and one read buffer. Responses are parsed by
// http.ReadResponse, so framing (Content-Length, chunked, close-delimited)
// is net/http's own. When the request's context ends, its connection is
// closed, as a client giving up does.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const (
	idleConnTimeout = 90 * time.Second
	readBufferSize  = 4 << 10
)

// transport sends requests to one origin.
type transport struct {
	addr    string // host:port to dial
	host    string // Host header
	path    string // request target
	tlsConf *tls.Config
	dialer  net.Dialer
	maxIdle int

	mu   sync.Mutex
	idle []*pconn // most recently used last
}

// pconn is one keep-alive connection.
type pconn struct {
	c         net.Conn
	br        *bufio.Reader
	idleSince time.Time
	reused    bool
}

func newTransport(u *url.URL, dialTimeout time.Duration, maxIdle int) *transport {
	t := &transport{host: u.Host, path: u.RequestURI(), maxIdle: maxIdle,
		dialer: net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if u.Scheme == "https" {
		t.tlsConf = &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	}
	return t
}

// closeIdle closes every pooled connection.
func (t *transport) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, pc := range idle {
		_ = pc.c.Close()
	}
}

// get takes a live pooled connection, or dials one.
func (t *transport) get(ctx context.Context) (*pconn, error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		pc := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if time.Since(pc.idleSince) < idleConnTimeout && !peerClosed(pc.c) {
			pc.reused = true
			return pc, nil
		}
		_ = pc.c.Close()
	}
	c, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	if t.tlsConf != nil {
		tc := tls.Client(c, t.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		c = tc
	}
	return &pconn{c: c, br: bufio.NewReaderSize(c, readBufferSize)}, nil
}

func (t *transport) put(pc *pconn) {
	pc.idleSince = time.Now()
	t.mu.Lock()
	if len(t.idle) < t.maxIdle {
		t.idle = append(t.idle, pc)
		pc = nil
	}
	t.mu.Unlock()
	if pc != nil {
		_ = pc.c.Close()
	}
}

// roundTrip sends one request (head: its header lines, each ending in
// CRLF, after the request line) and reads the answer's head. The caller
// must close the body. ctx ending closes the connection.
func (t *transport) roundTrip(ctx context.Context, method string, head, body []byte) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		pc, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { _ = pc.c.Close() })
		buf := reqBufs.Get().(*[]byte)
		b := append((*buf)[:0], method...)
		b = append(b, ' ')
		b = append(b, t.path...)
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
		_, err = pc.c.Write(b)
		*buf = b
		if cap(b) <= 64<<10 {
			reqBufs.Put(buf)
		}
		if err == nil {
			_, err = pc.br.Peek(1) // wait for the answer's first byte
		}
		if err != nil {
			stop()
			_ = pc.c.Close()
			// A keep-alive connection the server closed just as we sent:
			// it never saw the request, so send it once more on a new one
			// (net/http does the same).
			if ctx.Err() == nil && pc.reused && attempt == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
				continue
			}
			return nil, err
		}
		resp, err := readResponse(pc.br, method)
		if err != nil {
			stop()
			_ = pc.c.Close()
			return nil, err
		}
		resp.Body = &respBody{rc: resp.Body, pc: pc, t: t, stop: stop, keep: !resp.Close, eof: resp.ContentLength == 0}
		return resp, nil
	}
}

var reqBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// readResponse reads a final response, skipping informational ones.
func readResponse(br *bufio.Reader, method string) (*http.Response, error) {
	req := &http.Request{Method: method}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		_ = resp.Body.Close()
	}
}

// respBody gives the connection back to the pool once the body was read
// to its end and closed, unless the request's context ended.
type respBody struct {
	rc        io.ReadCloser
	pc        *pconn
	t         *transport
	stop      func() bool
	keep, eof bool
	closed    bool
}

func (b *respBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *respBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.eof {
		// An unread rest (a stream still open): the connection cannot be
		// reused. Close it first, so that closing the body does not wait
		// to drain it.
		_ = b.pc.c.Close()
		_ = b.rc.Close()
		b.stop()
		return nil
	}
	_ = b.rc.Close()
	if b.stop() && b.keep {
		b.t.put(b.pc)
	} else {
		_ = b.pc.c.Close()
	}
	return nil
}

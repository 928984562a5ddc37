package h1_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// What the server does with one request on one of its connections.
type step int

const (
	answer        step = iota // answer it, keep the connection
	drop                      // read it whole, then close without a byte (FIN)
	answerReset               // answer it, then reset the connection while idle (RST)
	answerClose               // answer it, then close the connection while idle (FIN)
	answerHalfOff             // answer it, then keep the connection but read nothing more
)

// scriptServer is a loopback HTTP/1.1 server that does to the reqth
// request (from 0) on its connth connection (from 0) what script says,
// counting every request it read whole. After an answer*Close/Reset/HalfOff
// step it waits for idle to be closed before acting, so that the client
// has read the answer first.
type scriptServer struct {
	ln       net.Listener
	script   func(conn, req int) step
	idle     chan struct{} // closed by the test: act on the idle connection now
	acted    chan struct{} // closed by the server once it has
	done     chan struct{} // closed when the test ends
	requests atomic.Int32
	conns    atomic.Int32
	wg       sync.WaitGroup
}

func startScriptServer(t *testing.T, script func(conn, req int) step) *scriptServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptServer{ln: ln, script: script, idle: make(chan struct{}), acted: make(chan struct{}), done: make(chan struct{})}
	var open sync.Map // the server's connections, closed when the test ends
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open.Store(c, true)
			n := int(s.conns.Add(1)) - 1
			s.wg.Go(func() { s.serve(c.(*net.TCPConn), n) })
		}
	})
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		open.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		s.wg.Wait()
	})
	return s
}

func (s *scriptServer) serve(c *net.TCPConn, conn int) {
	defer c.Close()
	br := bufio.NewReader(c)
	for req := 0; ; req++ {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		s.requests.Add(1)
		st := s.script(conn, req)
		if st == drop {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
		if st == answer {
			continue
		}
		select {
		case <-s.idle:
		case <-time.After(5 * time.Second):
			return
		}
		switch st {
		case answerReset:
			_ = c.SetLinger(0) // close sends RST
			_ = c.Close()
		case answerClose:
			_ = c.Close()
		case answerHalfOff:
			// Keep the connection open, reading nothing more: the
			// client's request dies on its own side.
		}
		close(s.acted)
		if st == answerHalfOff {
			<-s.done // not closing on the client's FIN: the look must find it open
		}
		return
	}
}

// call sends one tools/call over slot and reads the answer to its end.
func call(tr *h1.Transport, slot *h1.Slot, id int) error {
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo"}}`)
	resp, _, err := tr.RoundTrip(context.Background(), slot, time.Now().Add(5*time.Second), errors.New("deadline"), "POST",
		[]byte("Content-Type: application/json\r\n"), body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && string(b) != "{}" {
		err = errors.New("answer " + string(b))
	}
	return err
}

// TestResend: a request is sent again, once, on a new connection only
// when not a byte of it was written on the old one, as net/http does. A
// server that read the whole request and then closed without answering
// may have run the call: it must see it once, and the caller a
// connection failure, counted as such (mcp.Classify), not a success
// after a resend.
func TestResend(t *testing.T) {
	tests := []struct {
		name   string
		script func(conn, req int) step
		before func(t *testing.T, s *scriptServer, slot *h1.Slot) // between the two calls
		fails  bool
		conns  int32
	}{
		{
			name: "server read the request and closed without answering",
			script: func(conn, req int) step {
				if req == 1 {
					return drop
				}
				return answer
			},
			fails: true, conns: 1,
		},
		{
			name:   "server reset the idle connection: the write fails at once",
			script: func(conn, req int) step { return map[bool]step{true: answerReset, false: answer}[conn == 0] },
			before: func(t *testing.T, s *scriptServer, slot *h1.Slot) {
				close(s.idle)
				<-s.acted // and the RST has landed: loopback delivers it in the close
				// At once: the look before reuse (idle past PeekAfterIdle)
				// or the write finds it reset.
			},
			conns: 2,
		},
		{
			name:   "our side of the idle connection is shut: nothing is written",
			script: func(conn, req int) step { return map[bool]step{true: answerHalfOff, false: answer}[conn == 0] },
			before: func(t *testing.T, s *scriptServer, slot *h1.Slot) {
				close(s.idle)
				<-s.acted
				if err := h1.ShutWrite(slot); err != nil {
					t.Fatal(err)
				}
			},
			conns: 2,
		},
		{
			name:   "server closed the idle connection: it is looked at, not reused",
			script: func(conn, req int) step { return map[bool]step{true: answerClose, false: answer}[conn == 0] },
			before: func(t *testing.T, s *scriptServer, slot *h1.Slot) {
				close(s.idle)
				<-s.acted
				time.Sleep(h1.PeekAfterIdle + 20*time.Millisecond)
			},
			conns: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startScriptServer(t, tt.script)
			u, _ := url.Parse("http://" + s.ln.Addr().String() + "/mcp")
			tr := h1.New(u, time.Second, 4, nil)
			slot := new(h1.Slot)
			defer slot.Close()
			if err := call(tr, slot, 1); err != nil {
				t.Fatalf("first call: %v", err)
			}
			if tt.before != nil {
				tt.before(t, s, slot)
			}
			err := call(tr, slot, 2)
			if got := s.requests.Load(); got != 2 {
				t.Errorf("the server read %d requests, want 2 (the second one once)", got)
			}
			if got := s.conns.Load(); got != tt.conns {
				t.Errorf("%d connections, want %d", got, tt.conns)
			}
			if !tt.fails {
				if err != nil {
					t.Errorf("second call: %v, want it sent again on a new connection", err)
				}
				return
			}
			// The engine counts what mcp.Classify calls a connection
			// failure as a failed request (and does not send it again).
			if kind := mcp.Classify(err); err == nil || !mcp.IsConnKind(kind) {
				t.Errorf("second call: error %v (kind %q), want a connection failure", err, kind)
			}
		})
	}
}

// TestResendTLS: an https connection the server closed while idle is
// looked at too (under its records), and not reused: the request is not
// written on it, so that it fails neither sent twice nor at all.
func TestResendTLS(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/mcp")
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	tr := h1.New(u, time.Second, 4, &tls.Config{RootCAs: roots})
	slot := new(h1.Slot)
	defer slot.Close()
	for i := range 2 {
		if i == 1 {
			time.Sleep(200 * time.Millisecond) // past the server's idle timeout
		}
		if err := call(tr, slot, i+1); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

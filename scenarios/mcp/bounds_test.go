package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// hostileBytes is how much a hostile test server sends at most: many
// times the client's bounds, so that a client without them is seen
// reading far past them, yet small enough to end in a second.
const hostileBytes = 128 << 20

// endless writes prefix, then fill repeated without a line break, until
// hostileBytes were written, the client went away or the test's 20 s
// passed; it returns how many bytes it wrote.
func endless(w http.ResponseWriter, r *http.Request, prefix string, fill byte) int64 {
	chunk := bytes.Repeat([]byte{fill}, 32<<10)
	n, _ := io.WriteString(w, prefix)
	written := int64(n)
	stop := time.Now().Add(20 * time.Second)
	for written < hostileBytes && time.Now().Before(stop) && r.Context().Err() == nil {
		n, err := w.Write(chunk)
		written += int64(n)
		if err != nil {
			break
		}
	}
	return written
}

// allocBound is what reading one hostile answer or line may allocate
// in all, garbage included: a reader bounded at b grows its buffer by
// doubling up to about b, which allocates about 4·b (8·b under the race
// detector); an unbounded one holds all of the hostileBytes (32·b) it is
// sent, and allocates twice that growing to it.
func allocBound(b int) uint64 { return 16 * uint64(b) }

// allocatedDuring returns the bytes the process allocated while f ran
// (the test servers' own writes reuse one chunk: they allocate little).
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestListenLineBound: a notification stream whose line never ends (a
// data line, a comment) fails the listener with KindTooLarge once the
// line passes MaxLineBytes, without the client reading (and keeping) the
// rest: a hostile server cannot exhaust a user's memory.
func TestListenLineBound(t *testing.T) {
	for _, tt := range []struct{ name, prefix string }{{"data line", "data: "}, {"comment", ": "}} {
		prefix := tt.prefix
		t.Run(tt.name, func(t *testing.T) {
			var streams atomic.Int64
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					if streams.Add(1) > 1 { // one hostile stream; then none, so that Listen ends
						http.Error(w, "no stream", http.StatusMethodNotAllowed)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					endless(w, r, prefix, 'x')
					return
				}
				body, _ := io.ReadAll(r.Body)
				switch gjson.GetBytes(body, "method").String() {
				case "initialize":
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Mcp-Session-Id", "sess-1")
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`, mcptest.IDOf(body))
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			hs := httptest.NewServer(h)
			defer hs.Close()
			c := NewClient(hs.URL, ClientOptions{ProtocolVersion: "2025-06-18"})
			defer c.CloseIdleConnections()
			s := c.NewSession("")
			if err := s.Initialize(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer s.CloseConn()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var err error
			alloc := allocatedDuring(func() { err = s.Listener(ListenHooks{}).Listen(ctx) })
			if Classify(err) != KindTooLarge {
				t.Errorf("an endless stream line: %v (kind %q), want kind %q", err, Classify(err), KindTooLarge)
			}
			if alloc > allocBound(MaxLineBytes) {
				t.Errorf("the listener allocated %d MiB reading an endless line; the bound is %d MiB", alloc>>20, MaxLineBytes>>20)
			}
		})
	}
}

// TestBodyBound: an answer larger than MaxBodyBytes — a JSON body, an
// SSE answer's endless line, a plain http step's body — fails with
// KindTooLarge, and the client stops reading at the bound.
func TestBodyBound(t *testing.T) {
	tests := []struct {
		name   string
		media  string
		prefix string
		http   bool // a plain http step, not an MCP request
	}{
		{"json", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"`, false},
		{"sse line", "text/event-stream", `data: {"jsonrpc":"2.0","id":1,"result":{"x":"`, false},
		{"sse comment", "text/event-stream", `: `, false},
		{"http step", "text/plain", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tt.media)
				endless(w, r, tt.prefix, 'a')
			}))
			defer hs.Close()
			c := NewClient(hs.URL, ClientOptions{RequestTimeout: 20 * time.Second})
			defer c.CloseIdleConnections()
			s := c.NewSession("")
			defer s.CloseConn()
			var err error
			alloc := allocatedDuring(func() {
				if tt.http {
					_, err = s.HTTP(context.Background(), HTTPRequest{Method: http.MethodGet, Path: "/big"}, nil)
				} else {
					err = s.Ping(context.Background())
				}
			})
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindTooLarge {
				t.Fatalf("a %d MiB answer: %v (kind %q), want kind %q", hostileBytes>>20, err, Classify(err), KindTooLarge)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(MaxBodyBytes)) {
				t.Errorf("error %q does not say the bound", err)
			}
			if alloc > allocBound(MaxBodyBytes) {
				t.Errorf("the client allocated %d MiB reading a huge answer; the bound is %d MiB", alloc>>20, MaxBodyBytes>>20)
			}
		})
	}
}

// TestTooLargeIsAKind: the kind is listed and counted apart, so that
// errors_by_kind shows a hostile answer as what it is.
func TestTooLargeIsAKind(t *testing.T) {
	found := false
	for _, k := range Kinds {
		found = found || k == KindTooLarge
	}
	if !found || Kinds[KindIndex(KindTooLarge)] != KindTooLarge {
		t.Errorf("kind %q is not in Kinds %v", KindTooLarge, Kinds)
	}
	if KindIndex("no such kind") == KindIndex(KindTooLarge) {
		t.Errorf("unknown kinds are counted as %q", KindTooLarge)
	}
}

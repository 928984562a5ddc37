package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// streamServer serves a 2025 session (initialize, then a GET stream of
// three events with ids, closed after each) and a 2026-07-28
// subscriptions/listen stream (an acknowledgement, two notifications,
// then the closing result).
type streamServer struct {
	mu          sync.Mutex
	lastEventID []string // the Last-Event-ID of each GET
	listens     atomic.Int64
	noGET       bool
}

func (ss *streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	flush := func(format string, a ...any) {
		fmt.Fprintf(w, format, a...)
		w.(http.Flusher).Flush()
	}
	if r.Method == http.MethodGet {
		if ss.noGET {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		if r.Header.Get("Mcp-Session-Id") != "sess-9" || r.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
			http.Error(w, "GET without the session", http.StatusBadRequest)
			return
		}
		ss.mu.Lock()
		ss.lastEventID = append(ss.lastEventID, r.Header.Get("Last-Event-ID"))
		n := len(ss.lastEventID)
		ss.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		flush("retry: 20\n\n")
		for i := range 3 {
			flush("id: s-%d-%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n", n, i)
		}
		return
	}
	body, _ := io.ReadAll(r.Body)
	id := mcptest.IDOf(body)
	switch gjson.GetBytes(body, "method").String() {
	case "server/discover":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28","2025-06-18"],"capabilities":{}}}`, id)
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "sess-9")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`, id)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case MethodListen:
		ss.listens.Add(1)
		if !gjson.GetBytes(body, "params.notifications.toolsListChanged").Bool() {
			http.Error(w, "no filter", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		meta := `"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}`
		flush("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{%s,\"notifications\":{\"toolsListChanged\":true}}}\n\n", meta)
		for range 2 {
			flush(": keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{%s}}\n\n", meta)
		}
		flush("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",%s}}\n\n", id, meta)
		<-r.Context().Done() // the closing result ends the stream, whatever the transport does
	default:
		http.Error(w, "unexpected", http.StatusBadRequest)
	}
}

// listenFor runs a listener of a session speaking setting for d and
// returns what its hooks counted.
func listenFor(t *testing.T, h http.Handler, setting string, d time.Duration) (opened, resumed int64, messages map[string]int, err error) {
	t.Helper()
	hs := httptest.NewServer(h)
	defer hs.Close()
	c := NewClient(hs.URL, ClientOptions{ProtocolVersion: setting})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.CloseConn()
	messages = map[string]int{}
	var mu sync.Mutex
	var o, r atomic.Int64
	l := s.Listener(ListenHooks{
		Opened:  func(time.Duration) { o.Add(1) },
		Resumed: func() { r.Add(1) },
		Message: func(m string) { mu.Lock(); messages[m]++; mu.Unlock() },
	})
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err = l.Listen(ctx)
	return o.Load(), r.Load(), messages, err
}

// TestListen2026: subscriptions/listen asks for the list changes, counts
// the acknowledgement and the notifications, ends with the server's
// closing result and is opened again a second later.
func TestListen2026(t *testing.T) {
	ss := &streamServer{}
	opened, _, msgs, err := listenFor(t, ss, Version20260728, 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if opened != 2 || ss.listens.Load() != 2 {
		t.Errorf("opened %d streams (server saw %d) in 1.5 s, want 2", opened, ss.listens.Load())
	}
	if msgs["notifications/subscriptions/acknowledged"] != 2 || msgs["notifications/tools/list_changed"] != 4 {
		t.Errorf("messages %v", msgs)
	}
}

// TestListen2025: the GET stream carries the session id; each stream
// that ends is resumed with the last event id seen, after the server's
// retry delay (20 ms).
func TestListen2025(t *testing.T) {
	ss := &streamServer{}
	opened, resumed, msgs, err := listenFor(t, ss, "2025-06-18", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ss.mu.Lock()
	ids := append([]string(nil), ss.lastEventID...)
	ss.mu.Unlock()
	if len(ids) < 3 || ids[0] != "" || ids[1] != "s-1-2" || ids[2] != "s-2-2" {
		t.Fatalf("Last-Event-ID of the GETs: %q", ids)
	}
	if len(ids) > 16 {
		t.Errorf("%d GETs in 300 ms: the 20 ms retry delay was not kept", len(ids))
	}
	// The server counts a GET when its request arrives and the client when
	// the response's headers do, so the deadline may cut one GET between
	// the two: opened is len(ids) or one fewer, never more.
	if opened > int64(len(ids)) || opened < int64(len(ids)-1) || resumed < int64(len(ids)-2) || msgs["notifications/tools/list_changed"] < 3*(len(ids)-1) {
		t.Errorf("opened %d, resumed %d, messages %v for %d GETs", opened, resumed, msgs, len(ids))
	}
	_, _, _, err = listenFor(t, &streamServer{noGET: true}, "2025-06-18", time.Second)
	if !errors.Is(err, ErrNoStream) {
		t.Errorf("405 to the GET: %v, want ErrNoStream", err)
	}
}

package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestListen: subscriptions/listen answers an SSE stream: the
// acknowledgement with the honored filter, then the notifications asked
// for, each with the subscription id; CloseStreams ends it with the graceful
// closing result. A client that goes away ends its stream.
func TestListen(t *testing.T) {
	s, url := start(t, Options{DualEra: true, NotifyEvery: 10 * time.Millisecond})
	params := map[string]any{"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": false,
		"resourceSubscriptions": []string{"test://doc/1", "test://nope"}}}
	resp, br := stream(t, context.Background(), http.MethodPost, url, modernHeaders("subscriptions/listen", params),
		modernBody("listen-1", "subscriptions/listen", params, noCaps))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("listen: %d %v", resp.StatusCode, resp.Header)
	}
	next := func() message {
		t.Helper()
		ev, err := readEvent(br)
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, ev.data)
	}
	subID := func(m message) any {
		return m.Params["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"]
	}
	ack := next()
	honored, _ := json.Marshal(ack.Params["notifications"])
	if ack.Method != "notifications/subscriptions/acknowledged" || subID(ack) != "listen-1" ||
		string(honored) != `{"resourceSubscriptions":["test://doc/1"],"toolsListChanged":true}` {
		t.Fatalf("ack %+v (%s)", ack, honored)
	}
	seen := map[string]int{}
	for range 6 {
		m := next()
		if subID(m) != "listen-1" || m.ID != nil {
			t.Fatalf("notification %+v", m)
		}
		seen[m.Method]++
	}
	if seen["notifications/tools/list_changed"] < 2 || seen["notifications/resources/updated"] < 2 || len(seen) != 2 {
		t.Fatalf("notifications %v", seen)
	}
	if s.Listens() != 1 || s.ListensOpen() != 1 {
		t.Fatalf("listens %d open %d", s.Listens(), s.ListensOpen())
	}

	// A client that closes its stream ends the subscription.
	ctx, cancel := context.WithCancel(context.Background())
	stream(t, ctx, http.MethodPost, url, modernHeaders("subscriptions/listen", params), modernBody(2, "subscriptions/listen", params, noCaps))
	eventually(t, "a second stream", func() bool { return s.ListensOpen() == 2 })
	cancel()
	eventually(t, "the cancelled stream to end", func() bool { return s.ListensOpen() == 1 })

	// CloseStreams: the closing result, then the end of the stream.
	closed := make(chan struct{})
	go func() { s.CloseStreams(); close(closed) }()
	for {
		m := next()
		if m.Method != "" {
			continue // notifications sent before CloseStreams
		}
		meta, _ := json.Marshal(m.Result["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"])
		if string(m.ID) != `"listen-1"` || m.Result["resultType"] != "complete" || string(meta) != `"listen-1"` {
			t.Fatalf("closing result %+v", m)
		}
		break
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("after the closing result: %q", rest)
	}
	<-closed
	if s.ListensOpen() != 0 {
		t.Fatalf("%d listen streams open after CloseStreams", s.ListensOpen())
	}
	// After CloseStreams a new stream is refused.
	if a := post(t, url, modernHeaders("subscriptions/listen", params), modernBody(3, "subscriptions/listen", params, noCaps)); a.status != http.StatusServiceUnavailable {
		t.Fatalf("listen after CloseStreams: %d", a.status)
	}
}

// TestListenRefusals: the filter is required, taskIds need the Tasks
// extension.
func TestListenRefusals(t *testing.T) {
	_, url := start(t, Options{DualEra: true})
	wantError(t, call2026(t, url, "subscriptions/listen", nil, noCaps), http.StatusOK, -32602, "params.notifications")
	tasks := map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}
	wantError(t, call2026(t, url, "subscriptions/listen", tasks, noCaps), http.StatusBadRequest, -32021, "taskIds")
}

// TestGETStream: the 2025 GET stream of a session sends numbered
// list_changed events; after DropStreamAfter it ends (with a retry field)
// and a GET with Last-Event-ID resumes it, numbering on.
func TestGETStream(t *testing.T) {
	const drop = 3
	s, url := start(t, Options{NotifyEvery: 5 * time.Millisecond, DropStreamAfter: drop})
	sid := initialize(t, url)
	get := func(lastID string) (*http.Response, []sseEvent) {
		h := map[string]string{"Mcp-Session-Id": sid}
		if lastID != "" {
			h["Last-Event-ID"] = lastID
		}
		resp, br := stream(t, context.Background(), http.MethodGet, url, h, nil)
		var evs []sseEvent
		for {
			ev, err := readEvent(br)
			if err != nil {
				break
			}
			evs = append(evs, ev)
		}
		return resp, evs
	}
	resp, evs := get("")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || len(evs) != drop+1 || evs[drop].retry == "" {
		t.Fatalf("GET stream: %d %v %+v", resp.StatusCode, resp.Header, evs)
	}
	stream0, _, _ := strings.Cut(evs[0].id, "-")
	for i, ev := range evs[:drop] {
		if ev.id != fmt.Sprintf("%s-%d", stream0, i+1) || decode(t, ev.data).Method != "notifications/tools/list_changed" {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	_, evs = get(evs[drop-1].id)
	if len(evs) != drop+1 || evs[0].id != fmt.Sprintf("%s-%d", stream0, drop+1) || s.Resumes() != 1 || s.GETStreams() != 2 {
		t.Fatalf("resumed: %+v (resumes %d)", evs, s.Resumes())
	}
	// An id this server did not issue starts a new stream.
	_, evs = get("elsewhere-9")
	if strings.HasPrefix(evs[0].id, stream0) || !strings.HasSuffix(evs[0].id, "-1") || s.Resumes() != 1 {
		t.Fatalf("unknown Last-Event-ID: %+v", evs)
	}
}

// TestGETStreamEnds: a GET stream ends when its session is deleted, and
// on CloseStreams; the GETs a server does not serve are refused.
func TestGETStreamEnds(t *testing.T) {
	s, url := start(t, Options{DualEra: true, NotifyEvery: 5 * time.Millisecond})
	sid := initialize(t, url)
	h := map[string]string{"Mcp-Session-Id": sid}
	_, br := stream(t, context.Background(), http.MethodGet, url, h, nil)
	if _, err := readEvent(br); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	_, _ = io.ReadAll(br) // ends
	eventually(t, "the stream to end", func() bool { return s.GETStreamsOpen() == 0 })

	sid = initialize(t, url)
	_, br = stream(t, context.Background(), http.MethodGet, url, map[string]string{"Mcp-Session-Id": sid}, nil)
	if _, err := readEvent(br); err != nil {
		t.Fatal(err)
	}
	s.CloseStreams()
	_, _ = io.ReadAll(br)
	if s.GETStreamsOpen() != 0 {
		t.Fatal("GET stream open after CloseStreams")
	}

	status := func(url string, h map[string]string) int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	_, stateless := start(t, Options{Stateless: true})
	_, none := start(t, Options{NoGETStream: true})
	_, url2 := start(t, Options{DualEra: true})
	sid2 := initialize(t, url2)
	for _, c := range []struct {
		url  string
		h    map[string]string
		want int
	}{
		{stateless, nil, http.StatusMethodNotAllowed},
		{none, nil, http.StatusMethodNotAllowed},
		{url2, map[string]string{"Mcp-Session-Id": sid2, "MCP-Protocol-Version": "2026-07-28"}, http.StatusMethodNotAllowed},
		{url2, nil, http.StatusBadRequest},
		{url2, map[string]string{"Mcp-Session-Id": "gone"}, http.StatusNotFound},
	} {
		if got := status(c.url, c.h); got != c.want {
			t.Errorf("GET %v: %d, want %d", c.h, got, c.want)
		}
	}
}

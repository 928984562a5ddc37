package mcptest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The long-lived streams of both eras, each a handler that stays until
// the client goes away or CloseStreams ends it (which waits for them:
// nothing is left running):
//   - 2026-07-28: subscriptions/listen, a POST whose answer is an SSE
//     stream of the notifications the client opted in to;
//   - 2025: the standalone GET stream of a session, its events numbered
//     so that a client that lost it resumes with Last-Event-ID.

// openStream registers a stream with Close; false once closed.
func (s *handWritten) openStream() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.streams.Add(1)
	return true
}

// sse starts an SSE answer. X-Accel-Buffering keeps proxies from holding
// the events back (the transport spec's SHOULD).
func sse(w http.ResponseWriter) *http.ResponseController {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w)
}

// event writes one SSE event (with an id unless "") and flushes it, so
// that the client sees it now.
func event(w http.ResponseWriter, rc *http.ResponseController, id string, msg any) error {
	body, _ := json.Marshal(msg)
	if id != "" {
		fmt.Fprintf(w, "id: %s\n", id)
	}
	if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", body); err != nil {
		return err
	}
	return rc.Flush()
}

func notification(method string, params map[string]any) map[string]any {
	n := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		n["params"] = params
	}
	return n
}

// ticks is the notification clock; nil (never) when NotifyEvery < 0.
func (s *handWritten) ticks() (<-chan time.Time, func()) {
	if s.opts.NotifyEvery < 0 {
		return nil, func() {}
	}
	t := time.NewTicker(s.opts.NotifyEvery)
	return t.C, t.Stop
}

// subscriptionFilter is subscriptions/listen's notifications parameter
// (with the Tasks extension's taskIds).
type subscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

// listen serves subscriptions/listen: the acknowledgement with the subset
// of the filter honored, then list_changed (and resources/updated)
// notifications every NotifyEvery, each carrying the subscription id (the
// request's id); on CloseStreams the graceful closing result. A client that
// closes the stream cancels the subscription: nothing more is sent.
func (s *handWritten) listen(w http.ResponseWriter, r *http.Request, c *call) {
	var p struct {
		Notifications *subscriptionFilter `json:"notifications"`
	}
	if err := json.Unmarshal(c.req.Params, &p); err != nil || p.Notifications == nil {
		s.reply(w, c.req.ID, nil, &rpcError{Code: codeInvalidParams, Message: "subscriptions/listen needs params.notifications (the filter)"}, true)
		return
	}
	if len(p.Notifications.TaskIDs) > 0 && !c.caps.tasks() {
		s.reply(w, c.req.ID, nil, &rpcError{Code: codeMissingCapabilities, Message: "Missing required client capability: taskIds need the " + extTasks + " extension",
			Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}}}}, true)
		return
	}
	// Honored: the list changes and the subscriptions to resources that
	// exist; not taskIds (this server sends no notifications/tasks).
	honored := *p.Notifications
	honored.TaskIDs = nil
	honored.ResourceSubscriptions = nil
	for _, uri := range p.Notifications.ResourceSubscriptions {
		for _, d := range docs {
			if uri == d {
				honored.ResourceSubscriptions = append(honored.ResourceSubscriptions, uri)
			}
		}
	}
	if !s.openStream() {
		http.Error(w, "server closing", http.StatusServiceUnavailable)
		return
	}
	defer s.streams.Done()
	s.Answered.Add(1)
	s.listens.Add(1)
	s.listensOpen.Add(1)
	defer s.listensOpen.Add(-1)

	meta := func() map[string]any { return map[string]any{metaSubscriptionID: c.req.ID} }
	rc := sse(w)
	if event(w, rc, "", notification("notifications/subscriptions/acknowledged", map[string]any{"_meta": meta(), "notifications": honored})) != nil {
		return
	}
	var notes []map[string]any
	for _, n := range []struct {
		on     bool
		method string
	}{{honored.ToolsListChanged, "notifications/tools/list_changed"},
		{honored.PromptsListChanged, "notifications/prompts/list_changed"},
		{honored.ResourcesListChanged, "notifications/resources/list_changed"}} {
		if n.on {
			notes = append(notes, notification(n.method, map[string]any{"_meta": meta()}))
		}
	}
	for _, uri := range honored.ResourceSubscriptions {
		notes = append(notes, notification("notifications/resources/updated", map[string]any{"_meta": meta(), "uri": uri}))
	}
	tick, stop := s.ticks()
	defer stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			res := map[string]any{"_meta": meta()}
			modernResult(res)
			_ = event(w, rc, "", map[string]any{"jsonrpc": "2.0", "id": c.req.ID, "result": res})
			return
		case <-tick:
			for _, n := range notes {
				if event(w, rc, "", n) != nil {
					return
				}
			}
		}
	}
}

// getStreamHTTP serves the 2025 standalone GET stream of a session:
// notifications/tools/list_changed every NotifyEvery, event ids
// "<stream>-<n>". After DropStreamAfter events it ends the stream (after a
// retry field, as the 2025-11-25 transport asks of a server that closes a
// stream); a GET with the Last-Event-ID of one of the session's streams
// resumes it, numbering on (nothing was missed: the stream ended right
// after its last event).
func (s *handWritten) getStreamHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.NoGETStream || s.opts.Stateless || (s.opts.DualEra && r.Header.Get("Mcp-Protocol-Version") == version2026) {
		// Stateless: no session to scope a stream to. 2026-07-28 has
		// no GET stream (subscriptions/listen replaces it).
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "Accept must list text/event-stream", http.StatusNotAcceptable)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	sess := s.sessions[sid]
	streamID, seq, resumed := "", 0, false
	if id, n, ok := parseEventID(r.Header.Get("Last-Event-ID")); ok && sess != nil && s.getStream[id] == sid {
		streamID, seq, resumed = id, n, true
	} else if sess != nil {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		streamID = hex.EncodeToString(b)
		s.getStream[streamID] = sid
	}
	s.mu.Unlock()
	switch {
	case sid == "":
		http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
		return
	case sess == nil:
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if !s.openStream() {
		http.Error(w, "server closing", http.StatusServiceUnavailable)
		return
	}
	defer s.streams.Done()
	if resumed {
		s.resumes.Add(1)
	}
	s.getStreams.Add(1)
	s.getStreamsOpen.Add(1)
	defer s.getStreamsOpen.Add(-1)

	rc := sse(w)
	_ = rc.Flush() // the client sees the stream open before the first event
	tick, stop := s.ticks()
	defer stop()
	for sent := 0; ; {
		select {
		case <-r.Context().Done():
			return
		case <-sess.done: // the session was deleted
			return
		case <-s.closing:
			return
		case <-tick:
			seq++
			if event(w, rc, streamID+"-"+strconv.Itoa(seq), notification("notifications/tools/list_changed", nil)) != nil {
				return
			}
			if sent++; s.opts.DropStreamAfter > 0 && sent >= s.opts.DropStreamAfter {
				fmt.Fprintf(w, "retry: %d\n\n", max(s.opts.NotifyEvery.Milliseconds(), 1))
				_ = rc.Flush()
				return
			}
		}
	}
}

// parseEventID splits "<stream>-<n>".
func parseEventID(id string) (string, int, bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	return id[:i], n, err == nil && n >= 0
}

package mcptest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// handWritten is a minimal MCP server over Streamable HTTP written by
// hand (JSON-RPC over HTTP, no SDK): an implementation other than
// leakbench's gateway and the go-sdk, so that the client is held to the
// protocol, not to one server's habits.
//
// Without DualEra it is a server of the 2025 era (the initialize
// handshake, protocol 2025-03-26 to 2025-11-25), with the standalone GET
// stream and its resumability (streams.go). With DualEra it also serves
// MCP 2026-07-28 on the same endpoint, deciding per request (a request
// whose params._meta names the version is a 2026 one, era.go), with
// server/discover, caching hints and pagination (methods.go),
// input_required round trips (mrtr.go), the Tasks extension (tasks.go)
// and subscriptions/listen streams (streams.go). Its counters are the
// Server's.
type handWritten struct {
	*Server
	stateKey  []byte // signs requestState (mrtr.go)
	mu        sync.Mutex
	sessions  map[string]*session
	getStream map[string]string // GET stream id → its session, for Last-Event-ID
	tasks     map[string]*task
	lastPurge time.Time // of expired tasks
	closed    bool
	closing   chan struct{} // closed by closeStreams: streams end
	streams   sync.WaitGroup
}

// session is a 2025-era session; done is closed when it is deleted, which
// ends its GET streams.
type session struct{ done chan struct{} }

// newHandWritten returns the hand-written server of s, with the
// defaults of its options filled in.
func newHandWritten(s *Server) *handWritten {
	if s.opts.TaskDuration <= 0 {
		s.opts.TaskDuration = 200 * time.Millisecond
	}
	if s.opts.TaskPollInterval <= 0 {
		s.opts.TaskPollInterval = 50 * time.Millisecond
	}
	if s.opts.NotifyEvery == 0 {
		s.opts.NotifyEvery = 100 * time.Millisecond
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &handWritten{Server: s, stateKey: key, sessions: map[string]*session{}, getStream: map[string]string{},
		tasks: map[string]*task{}, closing: make(chan struct{})}
}

// closeStreams is Server.CloseStreams.
func (s *handWritten) closeStreams() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	s.streams.Wait()
}

func (s *handWritten) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

func (s *handWritten) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		s.deleteSession(w, r)
	case http.MethodGet:
		s.getStreamHTTP(w, r)
	case http.MethodPost:
		s.post(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *handWritten) deleteSession(w http.ResponseWriter, r *http.Request) {
	if s.opts.Stateless {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	sess := s.sessions[sid]
	delete(s.sessions, sid)
	if sess != nil {
		close(sess.done)
		for id, owner := range s.getStream {
			if owner == sid {
				delete(s.getStream, id)
			}
		}
	}
	s.mu.Unlock()
	if sess == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	s.Closed.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

func (s *handWritten) post(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !strings.Contains(r.Header.Get("Accept"), "application/json") {
		http.Error(w, "Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.JSONRPC != "2.0" {
		http.Error(w, "not JSON-RPC 2.0", http.StatusBadRequest)
		return
	}
	if s.opts.DualEra && isModern(r, &req) {
		s.modern(w, r, &req)
		return
	}
	s.legacy(w, r, &req)
}

// legacy answers a request of the 2025 era: the handshake mints the
// session that every later request must carry (unless stateless).
func (s *handWritten) legacy(w http.ResponseWriter, r *http.Request, req *request) {
	sid := r.Header.Get("Mcp-Session-Id")
	// server/discover needs no session: a dual-era server answers it
	// whichever era asks.
	if req.Method != "initialize" && !s.opts.Stateless && !(s.opts.DualEra && req.Method == methodDiscover) {
		s.mu.Lock()
		known := s.sessions[sid] != nil
		s.mu.Unlock()
		switch {
		case sid == "":
			http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
			return
		case !known:
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result, rpcErr := s.answer(&call{req: req, ctx: r.Context()})
	if req.Method == "initialize" && !s.opts.Stateless {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		sid = hex.EncodeToString(b)
		s.mu.Lock()
		s.sessions[sid] = &session{done: make(chan struct{})}
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	}
	s.reply(w, req.ID, result, rpcErr, false)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
	status  int    // the HTTP status of a 2026 answer; 0: by code (era.go)
}

// reply writes the answer to a request: JSON, or one SSE event when
// Options.SSE, except that a 2026 error with a 4xx status is always JSON
// (the status is the answer; an SSE stream under a 400 would be odd).
func (s *handWritten) reply(w http.ResponseWriter, id json.RawMessage, result map[string]any, rpcErr *rpcError, modern bool) {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	status := http.StatusOK
	if rpcErr != nil {
		resp["error"] = rpcErr
		if modern {
			status = rpcErr.httpStatus()
		}
	} else {
		if modern {
			modernResult(result)
		}
		resp["result"] = result
	}
	body, _ := json.Marshal(resp)
	s.Answered.Add(1)
	if s.opts.SSE && status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

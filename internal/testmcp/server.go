// Package testmcp is a minimal MCP server over Streamable HTTP written by
// hand (JSON-RPC over HTTP, no SDK), for tests: an implementation other
// than leakbench's gateway and the go-sdk, so that the client is held to
// the protocol, not to one server's habits. It answers in JSON or SSE,
// stateful (Mcp-Session-Id) or stateless, may require a bearer token, and
// counts the connections it accepted.
//
// By default it is a server of the 2025 era (the initialize handshake,
// protocol 2025-03-26 to 2025-11-25), with the standalone GET stream and
// its resumability (streams.go). With Options.Modern it is a dual-era
// server: it also serves MCP 2026-07-28 on the same endpoint, deciding per
// request (a request whose params._meta names the version is a 2026 one,
// era.go), with server/discover, caching hints and pagination
// (methods.go), input_required round trips (mrtr.go), the Tasks extension
// (tasks.go) and subscriptions/listen streams (streams.go).
package testmcp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options choose the server's behaviour. The zero value is today's 2025
// server: stateful, JSON answers, no auth, no 2026-07-28.
type Options struct {
	Stateless bool // no Mcp-Session-Id
	SSE       bool // answer requests as text/event-stream
	// Authorized, if set, decides whether a bearer token is accepted
	// (401 otherwise).
	Authorized func(token string) bool

	// Modern also serves MCP 2026-07-28 beside the 2025 era (a dual-era
	// server). Without it the server is 2025-only: server/discover is an
	// unknown method (or, stateful, a request without a session), so that
	// a client falls back to the handshake.
	Modern bool
	// ListTTL is the ttlMs of cacheable 2026 results (server/discover,
	// the lists, resources/read); 0 renders ttlMs 0 (immediately stale).
	ListTTL time.Duration
	// PageSize, above 0, splits the lists into pages of that many items
	// with nextCursor (both eras).
	PageSize int

	// TaskDuration is how long a slow_task runs (default 200ms);
	// TaskPollInterval the pollIntervalMs its task advertises (default
	// 50ms). TaskFail makes it end "failed" (a JSON-RPC error).
	TaskDuration     time.Duration
	TaskPollInterval time.Duration
	TaskFail         bool

	// NotifyEvery is the period of the list_changed notifications on
	// subscriptions/listen and GET streams (0: 100ms; negative: none).
	NotifyEvery time.Duration
	// DropStreamAfter, above 0, ends a GET stream after that many events
	// (with an SSE retry field), for the client to resume it.
	DropStreamAfter int
	// NoGETStream answers a GET with 405 (no standalone stream).
	NoGETStream bool
}

// Server is the handler; serve it with Serve or any http.Server.
type Server struct {
	opts      Options
	stateKey  []byte // signs requestState (mrtr.go)
	mu        sync.Mutex
	sessions  map[string]*session
	getStream map[string]string // GET stream id → its session, for Last-Event-ID
	tasks     map[string]*task
	lastPurge time.Time // of expired tasks
	counts    map[string]int64
	closed    bool
	closing   chan struct{} // closed by Close: streams end
	streams   sync.WaitGroup

	Conns    atomic.Int64 // connections accepted (with ConnState)
	Open     atomic.Int64 // connections open now
	Requests atomic.Int64 // JSON-RPC requests answered
	Closed   atomic.Int64 // sessions ended with DELETE

	inputRequired, inputCompleted        atomic.Int64
	tasksCreated, taskPolls, taskCancels atomic.Int64
	listens, listensOpen                 atomic.Int64
	getStreams, getStreamsOpen, resumes  atomic.Int64
}

// session is a 2025-era session; done is closed when it is deleted, which
// ends its GET streams.
type session struct{ done chan struct{} }

// New returns a server with the options.
func New(opts Options) *Server {
	if opts.TaskDuration <= 0 {
		opts.TaskDuration = 200 * time.Millisecond
	}
	if opts.TaskPollInterval <= 0 {
		opts.TaskPollInterval = 50 * time.Millisecond
	}
	if opts.NotifyEvery == 0 {
		opts.NotifyEvery = 100 * time.Millisecond
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Server{opts: opts, stateKey: key, sessions: map[string]*session{}, getStream: map[string]string{},
		tasks: map[string]*task{}, counts: map[string]int64{}, closing: make(chan struct{})}
}

// ConnState counts connections; set it as http.Server.ConnState.
func (s *Server) ConnState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.Conns.Add(1)
		s.Open.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.Open.Add(-1)
	}
}

// Close ends the open streams — a subscriptions/listen stream with its
// graceful closing result, a GET stream simply — and returns when they
// have ended; streams asked for later are refused with 503. Requests keep
// being answered.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	s.streams.Wait()
}

// Count is the number of JSON-RPC messages (requests and notifications,
// both eras, answered or refused) received with method.
func (s *Server) Count(method string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

// InputRequired is the number of input_required results sent.
func (s *Server) InputRequired() int64 { return s.inputRequired.Load() }

// InputCompleted is the number of retries that completed an
// input_required round trip (the final result was sent).
func (s *Server) InputCompleted() int64 { return s.inputCompleted.Load() }

// TasksCreated is the number of CreateTaskResults sent.
func (s *Server) TasksCreated() int64 { return s.tasksCreated.Load() }

// TaskPolls is the number of tasks/get requests answered with a task.
func (s *Server) TaskPolls() int64 { return s.taskPolls.Load() }

// TaskCancels is the number of tasks/cancel requests acknowledged.
func (s *Server) TaskCancels() int64 { return s.taskCancels.Load() }

// Listens is the number of subscriptions/listen streams opened;
// ListensOpen of those open now.
func (s *Server) Listens() int64     { return s.listens.Load() }
func (s *Server) ListensOpen() int64 { return s.listensOpen.Load() }

// GETStreams is the number of 2025 GET streams opened (resumed ones
// included); GETStreamsOpen of those open now.
func (s *Server) GETStreams() int64     { return s.getStreams.Load() }
func (s *Server) GETStreamsOpen() int64 { return s.getStreamsOpen.Load() }

// Resumes is the number of GET streams resumed with a Last-Event-ID this
// server issued.
func (s *Server) Resumes() int64 { return s.resumes.Load() }

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Authorized != nil {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !s.opts.Authorized(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
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

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
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

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !strings.Contains(r.Header.Get("Accept"), "application/json") {
		http.Error(w, "Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.JSONRPC != "2.0" {
		http.Error(w, "not JSON-RPC 2.0", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.counts[req.Method]++
	s.mu.Unlock()
	if s.opts.Modern && isModern(r, &req) {
		s.modern(w, r, &req)
		return
	}
	s.legacy(w, r, &req)
}

// legacy answers a request of the 2025 era: the handshake mints the
// session that every later request must carry (unless stateless).
func (s *Server) legacy(w http.ResponseWriter, r *http.Request, req *request) {
	sid := r.Header.Get("Mcp-Session-Id")
	// server/discover needs no session: a dual-era server answers it
	// whichever era asks.
	if req.Method != "initialize" && !s.opts.Stateless && !(s.opts.Modern && req.Method == methodDiscover) {
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
func (s *Server) reply(w http.ResponseWriter, id json.RawMessage, result map[string]any, rpcErr *rpcError, modern bool) {
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
	s.Requests.Add(1)
	if s.opts.SSE && status == http.StatusOK {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Serve serves s on ln until the returned server is closed.
func Serve(ln net.Listener, s *Server) *http.Server {
	hs := &http.Server{Handler: s, ConnState: s.ConnState}
	go func() { _ = hs.Serve(ln) }()
	return hs
}

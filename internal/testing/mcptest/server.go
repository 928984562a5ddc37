package mcptest

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options choose the server. The zero value is the hand-written server of
// the 2025 era: stateful, JSON answers, no auth, no 2026-07-28.
type Options struct {
	// SDK serves with the official go-sdk's server (sdk.go), the
	// reference implementation, instead of the hand-written one
	// (handwritten.go): its tools, resources and prompts are its own
	// (see [Start]).
	SDK bool

	// Stateless serves without sessions (no Mcp-Session-Id). The go-sdk
	// server then also speaks 2026-07-28, which it serves only in its
	// stateless mode.
	Stateless bool
	// SSE answers requests as text/event-stream rather than
	// application/json.
	SSE bool
	// DualEra also serves MCP 2026-07-28 beside the 2025 era on the same
	// endpoint, deciding per request: the hand-written server by the
	// request's params._meta (or its MCP-Protocol-Version header), the
	// go-sdk one by the header (2026-07-28 or later to a stateless
	// handler, the rest to the stateful one), as the reference gateway
	// does. Without it (and not stateless) server/discover is refused, so
	// that a client falls back to the handshake.
	DualEra bool
	// TTL is the ttlMs of cacheable 2026 results (server/discover on the
	// hand-written server, the lists, resources/read); 0 renders ttlMs 0
	// (immediately stale).
	TTL time.Duration
	// PageSize, above 0, splits the lists into pages of that many items
	// with nextCursor (the go-sdk's default when 0: 1000).
	PageSize int
	// Authorized, if set, decides whether a bearer token is accepted
	// (401 otherwise).
	Authorized func(token string) bool
	// TLS serves https (the test's CA is Server.Certificate).
	TLS bool
	// Listener, if set, is served instead of a new loopback listener.
	Listener net.Listener

	// The go-sdk server only.
	SessionTimeout time.Duration // idle sessions are dropped after this
	ExtraTools     int           // filler tools, to make tools/list paginate
	Ask            bool          // adds the tool ask (input_required)

	// The hand-written server only (its 2026 tools, prompt and resources
	// come with DualEra).
	//
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

// Server is a test MCP server behind httptest, with a recorder of the
// HTTP requests it received and counters of what it did.
type Server struct {
	*httptest.Server
	URL     string       // the MCP endpoint
	MCP     *mcp.Server  // the go-sdk server (Options.SDK), else nil
	hw      *handWritten // the hand-written server, else nil
	opts    Options
	handler http.Handler
	release chan struct{} // closed by Close: the go-sdk's slow tool returns
	once    sync.Once

	Conns atomic.Int64 // connections accepted
	Open  atomic.Int64 // connections open now
	// ClientGone counts requests whose client went away (closed the
	// connection) before the answer was done, as HTTP middleware sees it.
	ClientGone atomic.Int64
	// SlowAbandoned counts the SDK server's slow calls that ended because
	// their client gave up on them: its connection closed, or (the 2025
	// era) its notifications/cancelled arrived first, which ends the call
	// before the server may notice the connection go (ClientGone then
	// misses it).
	SlowAbandoned atomic.Int64
	// Answered counts the JSON-RPC requests the hand-written server
	// answered; Closed the sessions it ended on DELETE.
	Answered, Closed atomic.Int64

	inputRequired, inputCompleted        atomic.Int64
	tasksCreated, taskPolls, taskCancels atomic.Int64
	listens, listensOpen                 atomic.Int64
	getStreams, getStreamsOpen, resumes  atomic.Int64

	reqMu sync.Mutex
	reqs  []Request
}

// Request is one HTTP request the server received.
type Request struct {
	Method, RPCMethod              string
	SessionID, Version, Authorized string
	Header                         http.Header
	ID                             json.RawMessage // the JSON-RPC id (nil: a notification)
	Params                         json.RawMessage
	// Meta is params._meta, each member raw (nil: none).
	Meta map[string]json.RawMessage
}

// Start starts a server with the options; it is closed when the test
// ends.
//
// The hand-written server has the tool echo (returns its text argument);
// with DualEra also ask (input_required), slow_task (a task with the
// Tasks extension), the prompt ask_prompt and the resources
// test://doc/1 .. test://doc/3.
//
// The go-sdk server has the tools echo (returns its text), fail (isError
// result), slow (blocks until its context ends or the test ends), ask
// with Options.Ask (2026-07-28: asks for a name by elicitation,
// input_required, and greets it), and ExtraTools fillers tool00, tool01,
// ...; resources file:///r0.txt .. file:///r2.txt (text "content of
// <uri>"); prompts greet (argument who) and p0, p1.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := newServer(o)
	if o.Listener != nil {
		// Not NewUnstartedServer, which listens on loopback first: a
		// network namespace may have none.
		s.Server = &httptest.Server{Listener: o.Listener, Config: &http.Server{Handler: s.handler}}
	} else {
		s.Server = httptest.NewUnstartedServer(s.handler)
	}
	s.Server.Config.ConnState = s.connState
	if o.TLS {
		s.StartTLS()
	} else {
		s.Server.Start()
	}
	s.URL = s.Server.URL + "/mcp"
	tb.Cleanup(s.Close)
	return s
}

// newServer builds the server's handler: the implementation, behind the
// bearer check if any, behind the recorder.
func newServer(o Options) *Server {
	s := &Server{opts: o, release: make(chan struct{})}
	var h http.Handler
	if o.SDK {
		h = s.sdkHandler()
	} else {
		s.hw = newHandWritten(s)
		h = s.hw
	}
	if o.Authorized != nil {
		h = authorize(o.Authorized, h)
	}
	s.handler = s.record(h)
	return s
}

// Close ends the open streams, lets blocked tool calls return, closes
// the sessions a test left open on purpose, and stops the server. It may
// be called again.
func (s *Server) Close() {
	s.once.Do(func() {
		s.CloseStreams()
		close(s.release)
		if s.MCP != nil {
			for ss := range s.MCP.Sessions() {
				_ = ss.Close()
			}
		}
		s.Server.Close()
	})
}

// CloseStreams ends the hand-written server's open streams — a
// subscriptions/listen stream with its graceful closing result, a GET
// stream simply — and returns when they have ended; streams asked for
// later are refused with 503. Requests keep being answered. The go-sdk
// server's streams end with Close.
func (s *Server) CloseStreams() {
	if s.hw != nil {
		s.hw.closeStreams()
	}
}

func authorize(ok func(token string) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.Conns.Add(1)
		s.Open.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.Open.Add(-1)
	}
}

func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := Request{
			Method:     r.Method,
			SessionID:  r.Header.Get("Mcp-Session-Id"),
			Version:    r.Header.Get("Mcp-Protocol-Version"),
			Authorized: r.Header.Get("Authorization"),
			Header:     r.Header.Clone(),
		}
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage
				Method string
				Params json.RawMessage
			}
			_ = json.Unmarshal(body, &m)
			seen.RPCMethod, seen.ID, seen.Params = m.Method, m.ID, m.Params
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			seen.Meta = p.Meta
		}
		s.reqMu.Lock()
		s.reqs = append(s.reqs, seen)
		s.reqMu.Unlock()
		next.ServeHTTP(w, r)
		if r.Context().Err() != nil {
			s.ClientGone.Add(1)
		}
	})
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// CallTexts counts the text argument of every tools/call received (the
// echo tool's): what a plan's templates sent, e.g. its data rows.
func (s *Server) CallTexts() map[string]int {
	sent := map[string]int{}
	for _, r := range s.Requests() {
		var a struct {
			Arguments struct{ Text string } `json:"arguments"`
		}
		if r.RPCMethod == "tools/call" && json.Unmarshal(r.Params, &a) == nil {
			sent[a.Arguments.Text]++
		}
	}
	return sent
}

// Count is the number of JSON-RPC messages (requests and notifications,
// both eras, answered or refused) received with method.
func (s *Server) Count(method string) int64 {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	var n int64
	for _, r := range s.reqs {
		if r.RPCMethod == method {
			n++
		}
	}
	return n
}

// Sessions counts the server's open sessions.
func (s *Server) Sessions() int {
	if s.hw != nil {
		return s.hw.sessionCount()
	}
	n := 0
	for range s.MCP.Sessions() {
		n++
	}
	return n
}

// The hand-written server's counters.

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

// Modes are the four ways the go-sdk server can answer.
var Modes = []struct {
	Name string
	Opts Options
}{
	{"sse-stateful", Options{SDK: true, SSE: true}},
	{"json-stateful", Options{SDK: true}},
	{"sse-stateless", Options{SDK: true, SSE: true, Stateless: true}},
	{"json-stateless", Options{SDK: true, Stateless: true}},
}

// ModernModes are the ways the go-sdk server can answer 2026-07-28
// requests: stateless, or dual-era.
var ModernModes = []struct {
	Name string
	Opts Options
}{
	{"sse-stateless", Options{SDK: true, SSE: true, Stateless: true}},
	{"json-stateless", Options{SDK: true, Stateless: true}},
	{"sse-dual-era", Options{SDK: true, SSE: true, DualEra: true}},
	{"json-dual-era", Options{SDK: true, DualEra: true}},
}

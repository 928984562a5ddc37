package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// Main is a test package's TestMain: in a helper process started by
// [StartHelper] it serves the helper's endpoint instead of running tests;
// otherwise it runs the tests and checks that none left a goroutine
// behind.
func Main(m *testing.M) {
	if kind := os.Getenv(helperEnv); kind != "" {
		os.Exit(serveHelper(kind)) // a benchmark's server process, not a test run
	}
	goleak.VerifyTestMain(m)
}

// Options select how the real go-sdk server answers.
type Options struct {
	// JSON answers application/json rather than SSE; Stateless serves
	// without sessions — and so also speaks 2026-07-28, which go-sdk
	// serves only in its stateless mode.
	JSON, Stateless bool
	// DualEra serves both eras on one endpoint, as the reference gateway
	// does: requests whose MCP-Protocol-Version is 2026-07-28 or later go
	// to a stateless handler, the rest to the stateful one (Stateless
	// unset).
	DualEra        bool
	PageSize       int           // tools/list page size; 0: SDK default
	SessionTimeout time.Duration // idle sessions are dropped after this
	ExtraTools     int           // filler tools, to make tools/list paginate
	// TTL is the ttlMs of its list and resources/read results in the
	// 2026-07-28 era (0: the SDK's, immediately stale).
	TTL time.Duration
	// Ask adds the tool ask (input_required, see NewSDKServer).
	Ask bool
}

// Server is a real go-sdk MCP server behind httptest, with a recorder of
// the HTTP requests it received.
type Server struct {
	*httptest.Server
	MCP     *mcp.Server
	URL     string // the MCP endpoint
	release chan struct{}
	// ClientGone counts requests whose client went away (closed the
	// connection) before the answer was done, as HTTP middleware sees it.
	ClientGone atomic.Int64

	mu   sync.Mutex
	reqs []Request
}

// Request is one HTTP request the server received.
type Request struct {
	Method, RPCMethod              string
	SessionID, Version, Authorized string
	Header                         http.Header
	Params                         json.RawMessage
	// Meta is params._meta, each member raw (nil: none).
	Meta map[string]json.RawMessage
}

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text"`
}

// EchoOut is the echo tool's output.
type EchoOut struct {
	Echo string `json:"echo"`
}

// NewSDKServer starts a go-sdk server with tools:
// echo (returns its text), fail (isError result), slow (blocks until its
// context ends or the test ends), ask (2026-07-28: asks for a name by
// elicitation, input_required, and greets it), and ExtraTools fillers
// tool00, tool01, ...;
// resources file:///r0.txt .. file:///r2.txt (text "content of <uri>");
// prompts greet (argument who) and p0, p1.
func NewSDKServer(t testing.TB, o Options) *Server {
	t.Helper()
	so := &mcp.ServerOptions{PageSize: o.PageSize}
	if o.TTL > 0 {
		so.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = int(o.TTL.Milliseconds()) }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-test", Version: "v0"}, so)
	if o.Ask {
		addAsk(srv)
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, EchoOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, EchoOut{Echo: in.Text}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "always fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool failed on purpose")
		})
	s := &Server{MCP: srv, release: make(chan struct{})}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "blocks"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-s.release:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	for i := range o.ExtraTools {
		mcp.AddTool(srv, &mcp.Tool{Name: fmt.Sprintf("tool%02d", i)},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
	}
	for i := range 3 {
		uri := fmt.Sprintf("file:///r%d.txt", i)
		srv.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("r%d", i), MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "content of " + req.Params.URI}}}, nil
			})
	}
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	for i := range 2 {
		srv.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("p%d", i)}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}}, nil
		})
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: o.JSON, Stateless: o.Stateless, SessionTimeout: o.SessionTimeout})
	if o.DualEra {
		h = dualEra(h, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{JSONResponse: o.JSON, Stateless: true}))
	}
	s.Server = httptest.NewServer(s.record(h))
	s.URL = s.Server.URL + "/mcp"
	t.Cleanup(func() {
		close(s.release)
		for ss := range srv.Sessions() {
			_ = ss.Close() // sessions a test left open on purpose
		}
		s.Server.Close()
	})
	return s
}

// dualEra sends requests that speak 2026-07-28 or later (by their
// MCP-Protocol-Version header, which that revision requires on every
// request) to modern, the rest to legacy.
func dualEra(legacy, modern http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
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
				Method string
				Params json.RawMessage
			}
			_ = json.Unmarshal(body, &m)
			seen.RPCMethod, seen.Params = m.Method, m.Params
			var p struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			seen.Meta = p.Meta
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, seen)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
		if r.Context().Err() != nil {
			s.ClientGone.Add(1)
		}
	})
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Sessions counts the server's open sessions.
func (s *Server) Sessions() int {
	n := 0
	for range s.MCP.Sessions() {
		n++
	}
	return n
}

// Modes are the four ways the go-sdk server can answer.
var Modes = []struct {
	Name string
	Opts Options
}{
	{"sse-stateful", Options{}},
	{"json-stateful", Options{JSON: true}},
	{"sse-stateless", Options{Stateless: true}},
	{"json-stateless", Options{JSON: true, Stateless: true}},
}

// ModernModes are the ways the go-sdk server can answer 2026-07-28
// requests: stateless, or dual-era.
var ModernModes = []struct {
	Name string
	Opts Options
}{
	{"sse-stateless", Options{Stateless: true}},
	{"json-stateless", Options{JSON: true, Stateless: true}},
	{"sse-dual-era", Options{DualEra: true}},
	{"json-dual-era", Options{JSON: true, DualEra: true}},
}

// addAsk adds the tool ask: it asks for a name by elicitation
// (input_required) until a retry answers it, then greets it.
func addAsk(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "asks for a name (input_required), then greets it"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["user_name"].(*mcp.ElicitResult); ok && r.Action == "accept" {
				if name, _ := r.Content["name"].(string); name != "" {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + name + "!"}}}, nil, nil
				}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
			}}}, nil, nil
		})
}

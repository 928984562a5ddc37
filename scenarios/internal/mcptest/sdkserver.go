package scenarios

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

func TestMain(m *testing.M) {
	if kind := os.Getenv(helperEnv); kind != "" {
		os.Exit(serveHelper(kind)) // a benchmark's server process, not a test run
	}
	goleak.VerifyTestMain(m)
}

// sdkOpts selects how the real go-sdk server answers.
type sdkOpts struct {
	JSON, Stateless bool
	PageSize        int           // tools/list page size; 0: SDK default
	SessionTimeout  time.Duration // idle sessions are dropped after this
	ExtraTools      int           // filler tools, to make tools/list paginate
}

// sdkServer is a real go-sdk MCP server behind httptest, with a recorder of
// the HTTP requests it received.
type sdkServer struct {
	*httptest.Server
	MCP     *mcp.Server
	URL     string // the MCP endpoint
	release chan struct{}
	// clientGone counts requests whose client went away (closed the
	// connection) before the answer was done, as HTTP middleware sees it.
	clientGone atomic.Int64

	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	Method, RPCMethod              string
	SessionID, Version, Authorized string
	Header                         http.Header
	Params                         json.RawMessage
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// newSDKServer starts a go-sdk server with tools:
// echo (returns its text), fail (isError result), slow (blocks until its
// context ends or the test ends), and ExtraTools fillers tool00, tool01, ...;
// resources file:///r0.txt .. file:///r2.txt (text "content of <uri>");
// prompts greet (argument who) and p0, p1.
func newSDKServer(t testing.TB, o sdkOpts) *sdkServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-test", Version: "v0"}, &mcp.ServerOptions{PageSize: o.PageSize})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, echoOut{Echo: in.Text}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "always fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool failed on purpose")
		})
	s := &sdkServer{MCP: srv, release: make(chan struct{})}
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
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: o.JSON, Stateless: o.Stateless, SessionTimeout: o.SessionTimeout})
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

func (s *sdkServer) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := seenRequest{
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
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, seen)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
		if r.Context().Err() != nil {
			s.clientGone.Add(1)
		}
	})
}

func (s *sdkServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.reqs...)
}

func (s *sdkServer) sessions() int {
	n := 0
	for range s.MCP.Sessions() {
		n++
	}
	return n
}

// sdkModes are the four ways the go-sdk server can answer.
var sdkModes = []struct {
	name string
	opts sdkOpts
}{
	{"sse-stateful", sdkOpts{}},
	{"json-stateful", sdkOpts{JSON: true}},
	{"sse-stateless", sdkOpts{Stateless: true}},
	{"json-stateless", sdkOpts{JSON: true, Stateless: true}},
}

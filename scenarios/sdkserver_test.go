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
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	Method, RPCMethod              string
	SessionID, Version, Authorized string
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// newSDKServer starts a go-sdk server with tools:
// echo (returns its text), fail (isError result), slow (blocks until its
// context ends or the test ends), and ExtraTools fillers tool00, tool01, ...
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
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: o.JSON, Stateless: o.Stateless, SessionTimeout: o.SessionTimeout})
	s.Server = httptest.NewServer(s.record(h))
	s.URL = s.Server.URL + "/mcp"
	t.Cleanup(func() {
		close(s.release)
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
		}
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct{ Method string }
			_ = json.Unmarshal(body, &m)
			seen.RPCMethod = m.Method
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, seen)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
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

package mcptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text"`
}

// EchoOut is the echo tool's output.
type EchoOut struct {
	Echo string `json:"echo"`
}

// sdkHandler builds the go-sdk server of s (the tools, resources and
// prompts listed at Start) and its Streamable HTTP handler.
func (s *Server) sdkHandler() http.Handler {
	o := s.opts
	so := &mcp.ServerOptions{PageSize: o.PageSize}
	if o.TTL > 0 {
		so.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = int(o.TTL.Milliseconds()) }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-test", Version: "v0"}, so)
	s.MCP = srv
	if o.Ask {
		addAsk(srv)
	}
	addEcho(srv)
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "always fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the tool failed on purpose")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "blocks"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				s.SlowAbandoned.Add(1)
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
		&mcp.StreamableHTTPOptions{JSONResponse: !o.SSE, Stateless: o.Stateless, SessionTimeout: o.SessionTimeout})
	if o.DualEra {
		h = dualEra(h, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{JSONResponse: !o.SSE, Stateless: true}))
	}
	return h
}

// addEcho adds the tool echo: it returns its text, as content and as
// structured output.
func addEcho(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, EchoOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, EchoOut{Echo: in.Text}, nil
		})
}

// dualEra sends requests that speak 2026-07-28 or later (by their
// MCP-Protocol-Version header, which that revision requires on every
// request) to modern, the rest to legacy.
func dualEra(legacy, modern http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= version2026 {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
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

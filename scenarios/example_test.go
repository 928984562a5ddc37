package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/leakbench/leakbench/scenarios"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Config is written into the run directory as-is: durations as strings,
// tokens left out.
func ExampleConfig() {
	cfg := scenarios.Config{
		Target:   "http://127.0.0.1:8080/mcp",
		Users:    50,
		Duration: 30 * time.Second,
		RampUp:   5 * time.Second,
		ThinkMin: 50 * time.Millisecond,
		ThinkMax: 200 * time.Millisecond,
		Tools:    []scenarios.ToolCall{{Name: "query_orders", Arguments: map[string]any{"limit": 10}, Weight: 3}},
		Tokens:   []string{"never-serialized"},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "target": "http://127.0.0.1:8080/mcp",
	//   "users": 50,
	//   "duration": "30s",
	//   "ramp_up": "5s",
	//   "think_min": "50ms",
	//   "think_max": "200ms",
	//   "request_timeout": "0s",
	//   "list_tools_every": 0,
	//   "tools": [
	//     {
	//       "name": "query_orders",
	//       "arguments": {
	//         "limit": 10
	//       },
	//       "weight": 3
	//     }
	//   ],
	//   "seed": 0
	// }
}

// Run plays a scenario against an MCP server; here a go-sdk server on
// loopback.
func ExampleRun() {
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "v1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()

	res, err := scenarios.Run(context.Background(), scenarios.Config{
		Target:   ts.URL,
		Users:    4,
		Duration: 500 * time.Millisecond,
		ThinkMin: 10 * time.Millisecond,
		ThinkMax: 20 * time.Millisecond,
		Tools:    []scenarios.ToolCall{{Name: "echo", Arguments: map[string]any{"text": "hi"}}},
	}, nil) // pass os.Stderr for a progress line every second
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println("peak users:", res.PeakUsers)
	fmt.Println("failures:", res.Failures)
	fmt.Println("tools/call measured:", res.Latency["tools/call:echo"].Count > 0)
	// Output:
	// peak users: 4
	// failures: 0
	// tools/call measured: true
}

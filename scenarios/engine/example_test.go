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

// ParsePlan reads a scenario file; missing options get k6's defaults.
func ExampleParsePlan() {
	plan, err := scenarios.ParsePlan([]byte(`
scenarios:
  agents:
    executor: ramping-vus
    stages: [{duration: 10s, target: 50}, {duration: 20s, target: 50}]
    flow:
      - think: {uniform: [200ms, 1s]}
      - tools/call: {name: echo, arguments: {text: "user {{user}}"}}
thresholds:
  mcp_req_duration{method:tools/call}: ["p(95)<500"]
`), "agents.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := plan.Scenarios[0]
	fmt.Println(s.Name, s.Executor, "startVUs", s.StartVUs, "gracefulStop", s.GracefulStop)
	fmt.Println(plan.Thresholds[0].Metric, plan.Thresholds[0].Expression)
	// Output:
	// agents ramping-vus startVUs 1 gracefulStop 30s
	// mcp_req_duration{method:tools/call} p(95)<500
}

// Errors name the file, the line and what is wrong.
func ExampleParsePlan_errors() {
	_, err := scenarios.ParsePlan([]byte(`
scenarios:
  agents:
    executor: constant-vus
    duration: 30
    flow:
      - tools/cal: {name: echo}
thresholds:
  mcp_req_duration: ["p95<500"]
`), "agents.yaml")
	fmt.Println(err)
	// Output:
	// agents.yaml:5: scenarios.agents.duration: bad duration "30" (a unit is needed, e.g. "30s" or "500ms")
	// agents.yaml:7: scenarios.agents.flow[0]: unknown step "tools/cal"; want one of initialize, ping, tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get, think, endSession, choose
	// agents.yaml:9: thresholds.mcp_req_duration: threshold "p95<500": unknown aggregation "p95"; want avg, min, med, max, p(N), rate, count or value
}

// RunPlan plays a plan against an MCP server (here a go-sdk server on
// loopback) and judges its thresholds.
func ExampleRunPlan() {
	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "v1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()

	plan, err := scenarios.ParsePlan([]byte(`
scenarios:
  calls:
    executor: per-vu-iterations
    vus: 3
    iterations: 4
    flow:
      - tools/call: {name: echo, arguments: {text: "user {{user}} iteration {{iteration}}"}}
      - think: 10ms
thresholds:
  mcp_req_failed: ["rate<0.01"]
  iterations: ["count==12"]
`), "calls.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := scenarios.RunPlan(context.Background(), plan, scenarios.RunOptions{Target: ts.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("end:", res.EndReason)
	fmt.Println("tools/call:", res.Latency["tools/call:echo"].Count)
	for _, t := range res.Thresholds {
		fmt.Println(t.Metric, t.Expression, t.Pass)
	}
	// Output:
	// end: completed
	// tools/call: 12
	// mcp_req_failed rate<0.01 true
	// iterations count==12 true
}

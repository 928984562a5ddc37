package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunPlan plays a plan against an MCP server (here a go-sdk server on
// loopback) and judges its thresholds.
func ExampleRunPlan() {
	server := sdk.NewServer(&sdk.Implementation{Name: "example", Version: "v1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(server, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	defer ts.Close()

	p, err := scenariofile.Parse([]byte(`
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
	res, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: ts.URL})
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

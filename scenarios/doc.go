// Package scenarios is leakbench's virtual-user engine: it plays a load
// scenario against an MCP endpoint over Streamable HTTP and measures it.
//
// Each virtual user holds one MCP session ([Session]) of a lean,
// hand-written client that shares one HTTP connection pool with all other
// users ([Client]). A user initializes, then iterates — a tools/list every
// few iterations, otherwise a tools/call picked by weight — with think times
// in between, until the run's duration is over, and closes its session.
// Every request runs under a per-request timeout; when it fires the client
// really closes the request, as a real client giving up would, since that is
// what makes leaky gateways hold database connections.
//
// [Run] takes a [Config], which serializes to JSON as-is (tokens excepted),
// and returns a [Result]: counters, errors by kind (see [Classify]) and
// latency summaries taken from mergeable HDR histograms.
//
// Example:
//
//	cfg := scenarios.Config{
//		Target:   "http://127.0.0.1:8080/mcp",
//		Users:    50,
//		Duration: 30 * time.Second,
//		RampUp:   5 * time.Second,
//		ThinkMin: 50 * time.Millisecond,
//		ThinkMax: 200 * time.Millisecond,
//		Tools: []scenarios.ToolCall{
//			{Name: "query_orders", Arguments: map[string]any{"limit": 10}, Weight: 3},
//			{Name: "wait_for_run", Weight: 1},
//		},
//		Tokens: []string{token},
//	}
//	res, err := scenarios.Run(ctx, cfg, os.Stderr) // "elapsed 5s/30s users 50 req/s 210 errors 3 p95 45ms"
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%d requests, error rate %.2f%%, p95 %.1f ms\n",
//		res.Requests, 100*res.ErrorRate(), res.Latency["all"].P95Ms)
//
// The client can also be used on its own:
//
//	c := scenarios.NewClient("http://127.0.0.1:8080/mcp", scenarios.ClientOptions{})
//	defer c.CloseIdleConnections()
//	s := c.NewSession(token)
//	if err := s.Initialize(ctx); err != nil {
//		return err
//	}
//	defer s.Close(ctx)
//	res, err := s.CallTool(ctx, "query_orders", map[string]any{"limit": 10})
package scenarios

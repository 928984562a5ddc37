// Package mcptest holds what the scenario packages' tests and benchmarks
// share: a real go-sdk MCP server behind httptest that records what it
// received ([NewSDKServer]), a canned MCP endpoint, and helper server
// processes that run apart from the benchmark measuring the client
// ([StartHelper], with [Main] as TestMain). Only tests import it.
package mcptest

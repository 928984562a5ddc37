// Package mcptest is the one MCP test server every package's tests use,
// and what their benchmarks share. It is for tests only: no product code
// imports it, and the product binary must not link it (deps_test.go
// checks that `go list -deps ./cmd/leakbench` names nothing under
// internal/testing). It lives in internal/testing, beside testenv, so
// that the folder says what it is: support for tests, a leaf importing
// nothing of leakbench, which any package's tests may use.
//
// [Start] serves one of two implementations behind httptest, chosen by
// [Options]:
//
//   - the hand-written server (the default; handwritten.go and the files
//     it names): JSON-RPC over Streamable HTTP with no SDK, so that the
//     client is held to the protocol, not to one server's habits. It
//     speaks the 2025 era and, with Options.DualEra, 2026-07-28 on the
//     same endpoint: server/discover, caching hints and pages,
//     input_required round trips, the Tasks extension, subscriptions/listen
//     and the 2025 GET stream with Last-Event-ID.
//   - the official go-sdk's server (Options.SDK; sdk.go): the reference
//     implementation, for the conformance tests that hold the client to
//     what the SDK does.
//
// Both record the requests they received ([Server.Requests],
// [Server.Count]), may require a bearer token, and count connections;
// the hand-written one also counts what it did (input round trips, tasks,
// streams).
//
//	srv := mcptest.Start(t, mcptest.Options{DualEra: true, SSE: true})
//	res, err := engine.RunPlan(ctx, plan, engine.RunOptions{Target: srv.URL})
//	if srv.TasksCreated() != 9 { ... }
//
// For benchmarks, [StartHelper] runs a canned endpoint ([CannedMCP]) in a
// child process, so that the client's memory and CPU are measured
// without the server's; [Main] is then the test package's TestMain.
//
// Beside the MCP server, [StartTokenServer] serves an OAuth token
// endpoint, for the tests of the client's token sources.
package mcptest

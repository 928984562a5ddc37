// Package engine plays a scenario plan (package plan) against an MCP
// endpoint over Streamable HTTP and measures it.
//
// [RunPlan] compiles the plan, checks that the target is on this machine
// and answers as an MCP server, then plays every scenario under its
// executor. Each virtual user holds one session of the lean MCP client
// (package mcp) that shares a keep-alive connection pool with all other
// users: an idle user is one parked goroutine and a few hundred bytes. A
// user starts as its scenario's protocolVersion says (auto by default:
// MCP 2026-07-28 when the server offers it, else the 2025 handshake). In
// the 2025 era it initializes, keeps its session across iterations,
// re-initializes after a 404 on its session id (counted) and closes its
// session with DELETE when it stops; in the 2026-07-28 era its start is a
// server/discover and there is no session to keep or close (protocol.go).
// Result.Protocol counts the users by the version they spoke.
// Arrival-rate executors start iterations on a clock and measure their
// first request from the moment it was due (coordinated omission
// corrected, as wrk2 does); when no user is free, the iteration is dropped
// and counted, never queued.
//
// When a scenario's time is up, or the run's context ends (Ctrl-C), users
// start no new request; requests in flight get gracefulStop to finish, then
// are abandoned; sessions are closed.
//
// The [Result] holds counters, errors by kind (mcp.Classify), latency
// summaries from mergeable HDR histograms (per method, per tool and
// prompt, per scenario), every threshold's verdict and how the run ended;
// package results sums it up from what the engine counted, as it sums up
// the shards of one plan (leakbench merge).
// While it runs the engine appends a per-second time series to the run
// directory ([rundir.LoadFile], see scenarios/FORMAT.md), can serve live
// Prometheus metrics ([RunOptions].MetricsAddr), and draws a progress line.
// It also checks itself: how late it started what it had scheduled (think
// times, arrival-rate iterations, the requests after them), its own CPU and
// the machine's, each second and over the run; Result.Generator says
// whether it kept up or was saturated, in which case the latency figures
// include its own delay (generator.go; the rule is rundir.Generator's).
//
//	res, err := engine.RunPlan(ctx, p, engine.RunOptions{
//		Target:      "http://127.0.0.1:8080/mcp",
//		RunDir:      "out/run",
//		MetricsAddr: "127.0.0.1:9464",
//		Progress:    os.Stderr, // "elapsed 12s/1m0s users 50 req/s 210 errors 3 p95 45ms"
//	})
//	if err != nil {
//		return err // the run could not be played: bad plan, target not an MCP server, ...
//	}
//	if !res.ThresholdsPassed() {
//		os.Exit(99) // k6's convention
//	}
package engine

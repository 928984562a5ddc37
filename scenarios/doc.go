// Package scenarios is leakbench's virtual-user engine: it plays load
// scenarios against an MCP endpoint over Streamable HTTP and measures them,
// with the controls k6 users know — executors, stages, thresholds, an
// end-of-run summary — for MCP, and far lighter per user.
//
// # Scenario files
//
// A scenario file (YAML; see examples/annotated.yaml for every option) has
// k6's shape: named scenarios, each with an executor (constant-vus,
// ramping-vus, per-vu-iterations, constant-arrival-rate,
// ramping-arrival-rate), startTime and gracefulStop, and a flow of MCP steps
// (initialize, ping, tools/list, tools/call, resources/list, resources/read,
// prompts/list, prompts/get, think, endSession, choose); then thresholds in
// k6's syntax. [LoadFile] and [ParsePlan] read one into a [Plan]; every
// error names the file, the line and what is wrong.
//
// Names, URIs and arguments are templates: {{user}} (the user's index in
// the run), {{iteration}} (from 0), {{scenario}}, {{randInt LO HI}},
// {{pick A B ...}}, and {$pick: [values]} for a value of any type.
//
// # Running
//
// [RunPlan] plays a plan and returns a [Result]: counters, errors by kind
// (see [Classify]), latency summaries from mergeable HDR histograms (per
// method, per tool and prompt, per scenario), every threshold's verdict
// and how the run ended. While it runs it can append a per-second time
// series to a run directory (load.jsonl, see FORMAT.md), serve live
// Prometheus metrics, and draw a progress line.
//
//	plan, err := scenarios.LoadFile("scenarios/examples/annotated.yaml")
//	if err != nil {
//		return err // e.g. "annotated.yaml:42: scenarios.agents.flow[1].choose[3].steps: empty; want at least one step"
//	}
//	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
//	defer stop()
//	res, err := scenarios.RunPlan(ctx, plan, scenarios.RunOptions{
//		Target:   "http://127.0.0.1:8080/mcp",
//		Tokens:   tokens,
//		RunDir:   "out/run",
//		Progress: os.Stderr, // "elapsed 12s/1m0s users 50 req/s 210 errors 3 p95 45ms"
//	})
//	if err != nil {
//		return err // the run could not be played: bad plan, target not an MCP server, ...
//	}
//	_ = scenarios.WriteSummary(os.Stdout, res)
//	if !res.ThresholdsPassed() {
//		os.Exit(99) // k6's convention
//	}
//
// [Run] is the older, single-scenario entry point, kept as an adapter: a
// [Config] becomes one ramping-vus (or constant-vus) scenario.
//
// # Users and sessions
//
// Each virtual user holds one MCP session of a lean, hand-written client
// ([Client], [Session]) that shares a keep-alive connection pool with all
// other users and its own small HTTP/1.1 transport: an idle user is one
// parked goroutine and a few hundred bytes, with no connection of its own.
// A user initializes when it starts, keeps its session across iterations,
// re-initializes after a 404 on its session id (counted) and closes its
// session with DELETE when it stops. Every request runs under a timeout;
// abortAfter makes the client give up earlier on purpose. Either way the
// client really closes the connection, as a real client giving up would,
// since that is what makes leaky gateways hold database connections.
//
// When a scenario's time is up, or the run's context ends (Ctrl-C), users
// start no new request; requests in flight get gracefulStop to finish, then
// are abandoned; sessions are closed. Arrival-rate executors start
// iterations on a clock and measure their first request from the moment it
// was due (coordinated omission corrected, as wrk2 does); when no user is
// free, the iteration is dropped and counted, never queued.
package scenarios

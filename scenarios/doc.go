// Package scenarios is leakbench's load generator, in one package per job;
// this package holds only this map.
//
//   - [github.com/leakbench/leakbench/scenarios/plan]: the scenario
//     language. Plan, Scenario, Step and Threshold; validation; and
//     compilation into the form the engine plays (templates and threshold
//     expressions parsed).
//   - [github.com/leakbench/leakbench/scenarios/scenariofile]: the
//     scenario-file decoder: YAML (or JSON) into a plan, with every error
//     naming file and line, and the extra sections profiles add.
//   - [github.com/leakbench/leakbench/scenarios/engine]: plays a compiled
//     plan with k6's executors and virtual users, measures it in
//     mergeable HDR histograms, judges thresholds, writes load.jsonl
//     (FORMAT.md), serves live Prometheus metrics and returns a Result.
//   - [github.com/leakbench/leakbench/scenarios/mcp]: the lean MCP client
//     (Streamable HTTP) each virtual user holds a session of, and the
//     closed set of error kinds results are counted by.
//   - scenarios/internal/h1: the HTTP/1.1 transport under the client.
//   - [github.com/leakbench/leakbench/scenarios/faults]: the format of a
//     profile's faults: timeline and its recovery thresholds (the proxies
//     that apply it are fixtures/faultproxy).
//   - [github.com/leakbench/leakbench/scenarios/userdata]: the users' data
//     files (CSV, JSON) a plan binds.
//   - [github.com/leakbench/leakbench/scenarios/profiles]: the built-in
//     sign-off profiles.
//
// Data flows one way: a scenario file is decoded into a plan
// (scenariofile.Load), the engine plays it (engine.RunPlan) and writes
// into a run directory (internal/lib/rundir, a leaf: its records hold the
// plan as JSON, read back with scenariofile.ReadRecorded); the reports
// read the run directory. The engine never reads YAML, and nothing here
// links the stack (fixtures, containers, the gateway): the application
// layer (internal/app/runner) puts the pieces together.
//
//	p, err := scenariofile.Load("scenarios/examples/annotated.yaml")
//	if err != nil {
//		return err // e.g. "annotated.yaml:42: scenarios.agents.flow[1].choose[3].steps: empty; want at least one step"
//	}
//	res, err := engine.RunPlan(ctx, p, engine.RunOptions{
//		Target:   "http://127.0.0.1:8080/mcp",
//		RunDir:   "out/run",
//		Progress: os.Stderr, // "elapsed 12s/1m0s users 50 req/s 210 errors 3 p95 45ms"
//	})
package scenarios

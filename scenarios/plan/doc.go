// Package plan is leakbench's scenario language: what a load test plays,
// with the controls k6 users know — named scenarios, each under an
// executor (constant-vus, ramping-vus, per-vu-iterations,
// constant-arrival-rate, ramping-arrival-rate) with startTime and
// gracefulStop; a flow of MCP steps (initialize, ping, tools/list,
// tools/call, resources/list, resources/read, prompts/list, prompts/get,
// server/discover, think, endSession, choose, http); and thresholds in
// k6's syntax. protocolVersion chooses the era the users speak: auto (the
// default: MCP 2026-07-28 when the server offers it, else the 2025
// handshake), 2026-07-28 or a 2025 revision pinned, or negotiate (the
// 2025 handshake, any 2025 version).
//
// A scenario file (YAML; see scenarios/examples/annotated.yaml for every
// option, scenarios/FORMAT.md for the rules) is decoded into a [Plan] by
// package scenariofile; its errors, like Compile's ([Problems]), name the
// file, the line and what is wrong, and match [ErrInvalidPlan].
//
// Names, URIs and arguments are templates: {{user}} (the user's index in
// the run), {{iteration}} (from 0), {{scenario}}, {{randInt LO HI}},
// {{pick A B ...}}, and {$pick: [values]} for a value of any type.
//
// [Compile] checks a plan and compiles it into the form the engine plays
// ([Compiled]): options resolved, templates ([Template], [Text]) and
// threshold expressions ([threshold.Expr]) parsed. A Plan serializes to
// JSON in the scenario file's own shape, without tokens, so it can be
// written into a run directory as-is and read back.
//
//	p, err := scenariofile.Load("scenarios/examples/annotated.yaml")
//	if err != nil {
//		return err // e.g. "annotated.yaml:42: scenarios.agents.flow[1].choose[3].steps: empty; want at least one step"
//	}
//	fmt.Println(p.Describe()) // agents: constant-vus, 60 users for 20s; request timeout 5s
package plan

// Package starter writes a starter scenario file from what an MCP service
// says about itself: `leakbench init`. It connects as a client (the
// official go-sdk's, which picks the era as every SDK client does:
// server/discover, 2026-07-28 when offered, else the 2025 handshake),
// lists the tools (every page), resources and prompts, and writes a
// commented scenario in the scenario file's language
// (docs/reference/scenario.md): one weighted branch per tool, its
// arguments synthesised from the tool's inputSchema, think times, a probe:
// section and thresholds. Where an argument cannot be synthesised from
// the schema the file says so with a # TODO beside a value that plays but
// is a guess; with TryCalls each call is sent once first and one that
// fails is written commented out, with the answer it got, so that the
// file plays as-is with no failure.
//
// With a probe DSN it also asks PostgreSQL what the probes will need and
// see (the role's pg_monitor grant, idle_in_transaction_session_timeout,
// max_connections, the application names connected) and writes it as
// comments.
//
// A hostile or enormous server is bounded: every answer at most
// MaxAnswerBytes, at most Options.MaxTools tools written (the file says
// how many it left out), schemas read to MaxSchemaDepth levels.
//
//	res, err := starter.Init(ctx, starter.Options{Target: "http://127.0.0.1:8080/mcp"})
//	if err != nil {
//		return err // e.g. starter.ErrNotMCP
//	}
//	err = starter.WriteFile("leakbench.yaml", res.YAML, false)
package starter

// Package gateway is leakbench's reference MCP gateway: a real MCP server
// (the official go-sdk, Streamable HTTP at /mcp, JSON or SSE answers)
// serving both protocol eras on one endpoint — the 2025 handshake
// (stateful by default, or stateless) and the sessionless 2026-07-28,
// decided per request — with bearer-token auth and a
// token-scoping step that reads the caller's team memberships from
// PostgreSQL on every request, as IBM ContextForge's
// middleware/token_scoping.py did.
//
// It serves server/discover (2026-07-28), initialize and ping (2025), tools/list (the built-in tools plus the tools
// registered for the caller's teams, cursor-paginated), tools/call,
// resources/list and resources/read (the teams' documents),
// resources/templates/list, prompts/list and prompts/get, and in the
// 2026-07-28 era the Tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663, tasks.go: advertised by server/discover; tasks/get,
// tasks/cancel, tasks/update). Its tools:
//
//   - get_team_tools (a read), record_note (a write), generate_report (a
//     slow read: pg_sleep);
//   - start_run and wait_for_run: a run is done after Config.RunDelay;
//     wait_for_run polls it every Config.PollInterval for up to 30 s — or,
//     when a 2026-07-28 request declares the Tasks extension, answers with
//     a task (ttlMs Config.TaskTTL, pollIntervalMs Config.PollInterval)
//     whose every tasks/get checks the run once;
//   - call_upstream: forwards to a slow upstream HTTP service (package
//     upstream), as a federating gateway does;
//   - each team's registered tools (the tools table).
//
// /metrics exports the pool (mcp_gateway_db_pool_*), HTTP requests
// (mcp_gateway_http_*), MCP requests by method (mcp_gateway_mcp_*), tool
// calls (mcp_gateway_tool_calls_total) and tasks (mcp_gateway_tasks_*,
// and mcp_gateway_db_pool_task_connections: connections tasks hold
// between requests).
//
// It exists to be load-tested. Each documented connection-leak pattern is
// reproduced faithfully as a variant, its buggy code next to the fixed
// twin in the same file, so that what leakbench's probes see here is what
// they will see in a real service:
//
//   - VariantFixed: holds a connection only while it uses it — released
//     before any network I/O or sleep, on every failure path.
//   - VariantCommitInFinally (scoping.go): ContextForge #1885 / PR #1886.
//     The session cleanup is `commit; close` — when the commit fails (the
//     request's context was cancelled because the client gave up, or by
//     the service's own request deadline, Config.RequestTimeout, on a slow
//     database link: deadline.go), the close never runs and the session stays "idle in transaction", its
//     last query the membership SELECT, until PostgreSQL's
//     idle_in_transaction_session_timeout kills it (25P03).
//   - VariantHeldWhileWaiting (scoping.go): an MCP server whose
//     wait_for_run kept the authentication request's pooled connection for
//     its whole polling loop. The pool runs dry (acquired = max, acquire
//     waits and timeouts climb) while PostgreSQL sees only idle sessions.
//   - VariantHeldWhilePolling (taskpoll.go): its Tasks-era twin — an MCP
//     server that moved wait_for_run onto the Tasks extension by keeping
//     the tool call's session on the task: checked out at the task's
//     creation, reused by every tasks/get, closed only when the task
//     completes. Open tasks pin the pool (acquired =
//     mcp_gateway_db_pool_task_connections = open tasks) across their
//     polls and the time between them, with the same signature as
//     held-while-waiting; once the pool is pinned even the polls that
//     would complete the tasks cannot authenticate, and a task cancelled
//     or no longer polled holds its connection until its TTL.
//   - VariantHeldAcrossUpstream (callupstream.go): ContextForge #2518 /
//     #2323. A transaction stays open while call_upstream waits on the
//     upstream: idle in transaction for the upstream's latency, killed by
//     the timeout when the upstream is slower, and the call fails on the
//     connection's next use.
//   - VariantSessionOutsideRequest (usage.go): ContextForge #1862. A side
//     job — recording the token's last use — opens its own session outside
//     the request's session management and closes it only on the happy
//     path; a token used again within a second (any client under load)
//     leaves it idle in transaction on the UPDATE until the timeout kills
//     it. Config.TokenUsage gives the fixed variant the same side job, done
//     right.
//
// Database access goes through a unit-of-work Session (the analogue of an ORM
// session) that issues BEGIN/COMMIT itself on a pooled connection. pgx's own
// Tx would not leak here: Tx.Commit closes the connection when a commit fails
// with the transaction open, and pgxpool destroys a connection released
// mid-transaction. ORMs (SQLAlchemy in the incident) do not do that, which is
// why the incident happened; the Session reproduces their behaviour.
//
//	gw, err := gateway.Start(ctx, gateway.Config{DSN: dsn, Variant: "fixed", UpstreamURL: up.URL()})
//	if err != nil { ... }
//	defer gw.Close(ctx)
//	fmt.Println(gw.URL()) // http://127.0.0.1:PORT/mcp
package gateway

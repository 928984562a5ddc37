// Package gateway is leakbench's reference MCP gateway: a real MCP server
// (the official go-sdk, Streamable HTTP at /mcp) with bearer-token auth and a
// token-scoping step that reads the caller's team memberships from PostgreSQL
// on every request, as IBM ContextForge's middleware/token_scoping.py did.
//
// It exists to be load-tested. Each documented connection-leak pattern is
// reproduced faithfully as a variant, next to its fix, so that what
// leakbench's probes see here is what they will see in a real service:
//
//   - VariantFixed: releases its database session on every path.
//   - VariantCommitInFinally: ContextForge #1885 / PR #1886. The session
//     cleanup is `commit; close` — when the commit fails (the request's
//     context was cancelled because the client gave up), the close never
//     runs and the server session stays "idle in transaction" until
//     PostgreSQL's idle_in_transaction_session_timeout kills it.
//
// Database access goes through a unit-of-work Session (the analogue of an ORM
// session) that issues BEGIN/COMMIT itself on a pooled connection. pgx's own
// Tx would not leak here: Tx.Commit closes the connection when a commit fails
// with the transaction open, and pgxpool destroys a connection released
// mid-transaction. ORMs (SQLAlchemy in the incident) do not do that, which is
// why the incident happened; the Session reproduces their behaviour.
//
//	gw, err := gateway.Start(ctx, gateway.Config{DSN: dsn, Variant: "fixed"})
//	if err != nil { ... }
//	defer gw.Close(ctx)
//	fmt.Println(gw.URL()) // http://127.0.0.1:PORT/mcp
package gateway

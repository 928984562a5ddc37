// Package mcp is a lean MCP client over Streamable HTTP (protocol
// 2025-06-18, also 2025-03-26 and 2025-11-25), made for load tests: a
// [Client] holds the target and one keep-alive connection pool; a
// [Session] is one virtual user's MCP session, a few small fields with no
// goroutine and no connection of its own.
//
// A session sends what a load-test user sends — Initialize, Ping,
// ListTools, CallTool, ListResources, ReadResource, ListPrompts,
// GetPrompt, Close — checks each answer as far as the protocol asks
// (JSON or an SSE stream, JSON-RPC framing, the session id), and keeps
// nothing of it. Every request runs under a timeout; when it fires, or the
// caller's context ends, or the caller gives up on purpose
// ([Session.SetTimeouts]), the connection is really closed, as a client
// giving up would: that is what makes leaky gateways hold database
// connections.
//
// Every error is an [*Error] of one of a small, closed set of kinds
// ([Classify], [Kinds]), so runs against different targets compare kind by
// kind; no error message carries the session's bearer token.
//
//	c := mcp.NewClient("http://127.0.0.1:8080/mcp", mcp.ClientOptions{})
//	defer c.CloseIdleConnections()
//	s := c.NewSession(token)
//	if err := s.Initialize(ctx); err != nil {
//		return err // e.g. "initialize: http 401: bad token"
//	}
//	defer s.Close(ctx)
//	err := s.CallTool(ctx, "echo", []byte(`{"text":"hi"}`))
//	switch mcp.Classify(err) {
//	case "": // answered
//	case mcp.KindTool: // the tool said isError
//	}
package mcp

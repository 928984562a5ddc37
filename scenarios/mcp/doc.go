// Package mcp is a lean MCP client over Streamable HTTP, made for load
// tests: a [Client] holds the target and one keep-alive connection pool; a
// [Session] is one virtual user's MCP session, a few small fields with no
// goroutine and no connection of its own.
//
// It speaks both eras of the protocol. The 2025 era (2025-06-18 by
// default, also 2025-03-26 and 2025-11-25) opens a session with the
// initialize handshake and carries its Mcp-Session-Id; the sessionless
// 2026-07-28 has no handshake and no session: every request carries the
// version and the client's capabilities in params._meta and its method
// (and tool, prompt or resource) in the Mcp-Method and Mcp-Name headers,
// and server/discover tells what the server offers.
// ClientOptions.ProtocolVersion (or [Session.Pin]) chooses: "" or a 2025
// version for the handshake, [Version20260728], or [VersionAuto] to discover and use
// 2026-07-28 when the server offers it; [Session.Era] and
// [Session.ProtocolVersion] tell what the session speaks.
//
// A session sends what a load-test user sends — Initialize, Discover,
// Ping, ListTools, CallTool, ListResources, ReadResource, ListPrompts,
// GetPrompt, Close — checks each answer as far as the protocol asks
// (JSON or an SSE stream, JSON-RPC framing, the session id), and keeps
// nothing of it. Every request runs under a timeout; when it fires, or the
// caller's context ends, or the caller gives up on purpose
// ([Session.SetTimeouts]), the connection is really closed, as a client
// giving up would: that is what makes leaky gateways hold database
// connections.
// A 2025-era session then tells the server with notifications/cancelled
// (cancel.go, [CancelNoticeOf]); in 2026-07-28 the closed stream is the
// cancellation.
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

// Package bearer gives an MCP session its bearer token: a [TokenSource]
// that the client (package mcp) asks at each request, either a fixed
// token ([StaticTokens]) or one fetched with the OAuth 2.1
// client-credentials grant ([OAuthConfig], [NewOAuthTokens]) and
// refreshed before it expires or once the target refused it
// ([RefreshingTokenSource]).
//
// It is apart from package mcp because getting a token is a concern of
// its own — a token endpoint, its own shared HTTP transport through the
// environment's proxy, the refresh, secrets kept out of errors — that
// shares nothing with speaking MCP: the client sees only the interface,
// one call per request on a cached token, and the engine, the worker
// processes and the command line configure it without the client.
//
//	src := bearer.NewOAuthTokens(bearer.OAuthConfig{TokenURL: u, ClientID: id, ClientSecret: secret})
//	c := mcp.NewClient(target, mcp.ClientOptions{Tokens: src})
package bearer

// Package servers runs leakbench's servers in the foreground, each until
// its context is done: the reference MCP gateway (leakbench gateway), its
// slow upstream (leakbench upstream), the docker stack's fault proxies
// (leakbench faultproxy), and a whole stack — PostgreSQL, PgBouncer, the
// gateway and the upstream — whose endpoints it prints (leakbench up). It
// also builds the docker provider's images (leakbench images).
//
// Each is a thin function over gateway-under-test, its upstream, fixtures
// or fixtures/faultproxy; their configuration types are re-exported as
// aliases, since a wrapper type around each would be ceremony.
//
//	cfg := servers.DefaultGatewayConfig()
//	cfg.DSN, cfg.Variant = dsn, "commit-in-finally"
//	err := servers.ServeGateway(ctx, cfg) // until ctx is done
package servers

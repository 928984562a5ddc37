// Package ownservice resolves what the command line says of the user's
// own service — its MCP URL and name, its bearer tokens file, its TLS and
// OAuth settings, and its probes' DSNs and metrics URL — into the
// endpoints a run uses (fixtures.External) and how the engine reaches it
// (runner.TargetOptions).
//
// It is apart from cmd/leakbench because every command that loads or
// probes the service (run, capacity, soak, signoff, probe, init) resolves
// it by the same rules — a sign-off's side falling back to the shared
// flags, the probes that need a probe DSN, OAuth from flags or the
// environment — while the flags themselves, which cmd defines, only bind
// to these fields.
//
//	s := &ownservice.Service{Target: "https://staging.example.com/mcp", ProbeDSN: dsn, Conn: conn}
//	topts, err := s.Conn.Options() // TLS, OAuth client credentials
//	ext, err := s.External(topts)  // errors.Is(err, cliflag.ErrUsage): exit 2
//	name := s.RunName()             // --name, else the target's host and port
package ownservice

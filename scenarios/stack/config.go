// Package stack is the format of a stack's settings: what PostgreSQL,
// PgBouncer and the reference gateway are started with. A profile's stack:
// section is decoded straight into it and every run's config.json records
// it; package fixtures starts what it says. It is a leaf, so that the
// profile format (package profiles) links no container stack and no
// gateway.
package stack

import "time"

// Config holds the settings of a stack. The zero value of every field means
// its default; defaults follow the ContextForge incident's stack where they
// fit on a small machine.
//
// Its yaml tags are the keys of a profile's stack: section, for the
// fields a profile may set (decoded straight into Config, so the two
// cannot drift); the others are "-".
type Config struct {
	// Variant is the reference gateway's variant (gateway-under-test;
	// the stack's provider checks it).
	Variant string `json:"variant" yaml:"-"`
	// IdleInTxTimeout is PostgreSQL's idle_in_transaction_session_timeout.
	// Default 120 s, as in the incident. Negative disables it.
	IdleInTxTimeout time.Duration `json:"idle_in_transaction_session_timeout" yaml:"idle_in_transaction_session_timeout"`
	// MaxConnections is PostgreSQL's max_connections. Default 100.
	MaxConnections int `json:"max_connections" yaml:"max_connections"`
	// PoolMode is PgBouncer's pool_mode. Default "transaction".
	PoolMode string `json:"pool_mode" yaml:"pool_mode"`
	// PgBouncerPoolSize is PgBouncer's default_pool_size. Default 40.
	PgBouncerPoolSize int `json:"pgbouncer_pool_size" yaml:"pgbouncer_pool_size"`
	// MaxClientConn is PgBouncer's max_client_conn. Default 1000.
	MaxClientConn int `json:"max_client_conn" yaml:"max_client_conn"`
	// GatewayPoolSize is the gateway's own pgxpool size. Default 40.
	GatewayPoolSize int `json:"gateway_pool_size" yaml:"gateway_pool_size"`
	// GatewayPoolTimeout is how long a gateway request waits for a pooled
	// connection before it fails. Default: the gateway's (30 s).
	GatewayPoolTimeout time.Duration `json:"gateway_pool_timeout" yaml:"gateway_pool_timeout"`
	// GatewayRequestTimeout is the gateway's own per-request deadline
	// (gateway.Config.RequestTimeout): a service's timeout middleware.
	// Default 0: none.
	GatewayRequestTimeout time.Duration `json:"gateway_request_timeout,omitempty" yaml:"gateway_request_timeout"`
	// GatewayStateless serves MCP without sessions.
	GatewayStateless bool `json:"gateway_stateless" yaml:"gateway_stateless"`
	// GatewayTokenUsage turns on the gateway's token-usage tracking
	// (gateway.Config.TokenUsage): each request records its token's last
	// use. The session-outside-request variant always does (its bug lives
	// there); a sign-off of that variant sets it so that the fixed run does
	// the same side job, done right.
	GatewayTokenUsage bool `json:"gateway_token_usage" yaml:"gateway_token_usage"`
	// GatewayRareLeakEvery is how rarely the commit-in-finally-rare
	// variant leaks: one request in this many (gateway.Config.RareLeakEvery;
	// 0: the gateway's default, 500).
	GatewayRareLeakEvery int `json:"gateway_rare_leak_every,omitempty" yaml:"gateway_rare_leak_every"`
	// RunDelay is how long after start_run a run is done. Default: the
	// gateway's (5 s).
	RunDelay time.Duration `json:"run_delay" yaml:"run_delay"`
	// UpstreamLatency is how long the upstream behind call_upstream takes
	// to answer each call. Default 0.
	UpstreamLatency time.Duration `json:"upstream_latency" yaml:"upstream_latency"`
	// UpstreamFailureRate is the fraction of upstream calls answered 503.
	UpstreamFailureRate float64 `json:"upstream_failure_rate" yaml:"upstream_failure_rate"`
	// Users is how many seeded users (each with an API token). Default 200.
	Users int `json:"users" yaml:"users"`
	// Teams is how many seeded teams. Default 10.
	Teams int `json:"teams" yaml:"teams"`
	// Seed makes the seed data (team memberships) and the upstream's
	// failures reproducible. Default 1. It does not make the bearer tokens
	// predictable: see TokenSeed.
	Seed int64 `json:"seed" yaml:"seed"`
	// TokenSeed, when not 0, derives the seeded users' bearer tokens from
	// it (SeedToken), so that they can be recomputed elsewhere (the
	// external provider's default tokens). 0, the default: every stack's
	// tokens are random (crypto/rand), and only Env.Tokens knows them.
	// Whoever knows a TokenSeed knows the tokens: it is kept out of JSON
	// like them.
	TokenSeed int64 `json:"-" yaml:"-"`
	// FaultLinks are the links (faults.LinkDB, LinkPG, LinkUpstream) the
	// local and docker providers wire through fault proxies (Env.Faults);
	// none by default, and then nothing is proxied. The external provider
	// refuses them.
	FaultLinks []string `json:"fault_links,omitempty" yaml:"-"`
	// RestartServers says the run restarts the stack's servers
	// (Env.StopServer, Env.StartServer), which only the local provider
	// can: auto picks it, docker is refused.
	RestartServers bool `json:"restart_servers,omitempty" yaml:"-"`
	// LogDir, when set, receives postgres.log and pgbouncer.log.
	LogDir string `json:"-" yaml:"-"`
	// NoGateway starts only PostgreSQL and PgBouncer.
	NoGateway bool `json:"-" yaml:"-"`
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Variant == "" {
		c.Variant = "fixed"
	}
	if c.IdleInTxTimeout == 0 {
		c.IdleInTxTimeout = 120 * time.Second
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = 100
	}
	if c.PoolMode == "" {
		c.PoolMode = "transaction"
	}
	if c.PgBouncerPoolSize == 0 {
		c.PgBouncerPoolSize = 40
	}
	if c.MaxClientConn == 0 {
		c.MaxClientConn = 1000
	}
	if c.GatewayPoolSize == 0 {
		c.GatewayPoolSize = 40
	}
	if c.Users == 0 {
		c.Users = 200
	}
	if c.Teams == 0 {
		c.Teams = 10
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

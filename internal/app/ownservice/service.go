package ownservice

import (
	"fmt"
	"net/url"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// Service is one service's endpoints as the command line gives them: its
// MCP URL, its name in the reports, its bearer tokens, and the probes of
// its database, PgBouncer and metrics. Conn, the TLS and OAuth settings,
// is nil on a sign-off's side: both sides share the command's.
type Service struct {
	// Prefix is the flags' prefix in messages: "before-" or "after-" on a
	// sign-off's side, else "".
	Prefix string
	// Target is the service's MCP endpoint (--target).
	Target string
	// Name is the service's name in reports (--name; "": RunName).
	Name string
	// TokensFile holds its bearer tokens, one a line (--tokens-file).
	TokensFile string
	// MetricsURL is its Prometheus endpoint (--metrics-url).
	MetricsURL string
	// ProbeDSN and PgBouncer are the probes' DSNs: the database's, direct,
	// and PgBouncer's admin console.
	ProbeDSN  *cliflag.Secret
	PgBouncer *cliflag.Secret
	// Conn is how the engine reaches the service (TLS, OAuth).
	Conn *Conn
}

// Given: a flag of the service other than its probe secrets' environment
// was set on the command line.
func (s *Service) Given() bool {
	return s.Target != "" || s.Name != "" || s.TokensFile != "" || s.MetricsURL != "" ||
		s.ProbeDSN.Given() || s.PgBouncer.Given() || (s.Conn != nil && s.Conn.InUse())
}

// RefuseWithout is the usage error for own-service flags given with no
// target to apply them to; what names the target's flag.
func (s *Service) RefuseWithout(what string) error {
	if !s.Given() {
		return nil
	}
	return fmt.Errorf("%w: --probe-dsn, --pgbouncer-admin-dsn, --metrics-url, --tokens-file, --name and the TLS/OAuth flags belong to %s (your own service)", cliflag.ErrUsage, what)
}

// WithDefaults fills what a sign-off side leaves out from the shared
// flags: probe DSNs, metrics URL and tokens file. The target and name are
// the side's own.
func (s *Service) WithDefaults(shared *Service) {
	if s.MetricsURL == "" {
		s.MetricsURL = shared.MetricsURL
	}
	if s.TokensFile == "" {
		s.TokensFile = shared.TokensFile
	}
	if !s.ProbeDSN.Given() {
		s.ProbeDSN = shared.ProbeDSN
	}
	if !s.PgBouncer.Given() {
		s.PgBouncer = shared.PgBouncer
	}
}

// External resolves the service's endpoints for a run on it: the probe
// DSNs, the tokens file read, the TLS settings of conn (Conn.Options). A usage error
// when a probe that needs the database probe is given without it.
func (s *Service) External(conn runner.TargetOptions) (fixtures.External, error) {
	ext := fixtures.External{GatewayURL: s.Target, GatewayMetricsURL: s.MetricsURL, TLS: conn.TLS}
	var err error
	if ext.ProbeDSN, err = s.ProbeDSN.Value(); err != nil {
		return ext, err
	}
	if ext.PgBouncerAdminDSN, err = s.PgBouncer.Value(); err != nil {
		return ext, err
	}
	if ext.ProbeDSN == "" && (ext.PgBouncerAdminDSN != "" || ext.GatewayMetricsURL != "") {
		return ext, fmt.Errorf("%w: --%spgbouncer-admin-dsn and --%smetrics-url join the probes, which need a probe DSN (%s)", cliflag.ErrUsage, s.Prefix, s.Prefix, s.ProbeDSN.Sources())
	}
	if s.TokensFile != "" {
		if ext.Tokens, err = scenariofile.ReadTokens(s.TokensFile); err != nil {
			return ext, fmt.Errorf("%w: --%stokens-file: %w", cliflag.ErrUsage, s.Prefix, err)
		}
	}
	return ext, nil
}

// RunName is what a run against the service is called: --name, else the
// target's host and port (externalName).
func (s *Service) RunName() string { return externalName(s.Name, s.Target) }

// externalName is what a run against the user's own service is called:
// name, else the target's host and port (never its credentials, path or
// query, which may carry secrets).
func externalName(name, target string) string {
	if name != "" {
		return name
	}
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		return u.Host
	}
	return "external"
}

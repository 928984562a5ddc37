package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// The own-service flags: how every command that loads or probes the
// user's own service (run, capacity, soak, signoff, probe) reaches it.
// They are defined here once, so that --target, --probe-dsn and the rest
// have the same name, help and default wherever they appear (#38).
//
// The flag definitions below name each flag literally (fs.StringVar(…,
// "target", …)): the GitHub Action's test reads the CLI's flags from these
// sources. A side of a sign-off (--before-target …) gets the same flags
// under a prefix, copied from a scratch set (prefixed).

// serviceFlags are one service's endpoints: its MCP URL, its name in the
// reports, its bearer tokens, and the probes of its database, PgBouncer
// and metrics. conn, the TLS and OAuth settings, is nil on a sign-off's
// side: both sides share the command's.
type serviceFlags struct {
	prefix     string
	target     string
	name       string
	tokensFile string
	metricsURL string
	probeDSN   *secretFlag
	pgbouncer  *secretFlag
	conn       *targetFlags
}

// serviceParts choose which of the own-service flags a command takes.
type serviceParts struct {
	// load: the command loads the service (--target, --tokens-file,
	// TLS, OAuth), not only probes it.
	load bool
	// name: the command's runs are named after the service (--name).
	name bool
}

// addServiceFlags defines the own-service flags on fs. The older
// spellings (--dsn, --pgbouncer, --scrape, --insecure) stay accepted,
// hidden from help.
func addServiceFlags(c *cli, fs *flag.FlagSet, parts serviceParts) *serviceFlags {
	s := defineService(fs, parts, "LEAKBENCH_PROBE_DSN", "LEAKBENCH_PGBOUNCER_ADMIN_DSN")
	s.probeDSN.getenv, s.pgbouncer.getenv = c.getenv, c.getenv
	if parts.load {
		s.conn = addTargetFlags(fs)
		s.conn.getenv, s.conn.clientID.getenv, s.conn.secret.getenv = c.getenv, c.getenv, c.getenv
		addAlias(fs, "insecure", "insecure-skip-verify")
	}
	addAlias(fs, "dsn", "probe-dsn")
	addAlias(fs, "pgbouncer", "pgbouncer-admin-dsn")
	if parts.load {
		addAlias(fs, "scrape", "metrics-url")
	}
	return s
}

// defineService defines the flags of one service; the secrets fall back
// to the environment variables named (none: "").
func defineService(fs *flag.FlagSet, parts serviceParts, probeEnv, pgbouncerEnv string) *serviceFlags {
	s := &serviceFlags{}
	if parts.load {
		fs.StringVar(&s.target, "target", "", "your MCP endpoint, any http(s) `URL` (https://staging.example.com/mcp); without --probe-dsn the run is load only and thresholds decide the exit code")
		fs.StringVar(&s.tokensFile, "tokens-file", "", "`FILE` of bearer tokens, one a line (default: the scenario's tokensFile or tokens)")
		fs.StringVar(&s.metricsURL, "metrics-url", "", "your service's Prometheus endpoint `URL`, for its pool metrics (optional; needs a probe DSN)")
	}
	if parts.name {
		fs.StringVar(&s.name, "name", "", "your service's `NAME` in reports, summary.json, compare and JUnit (default: the target's host and port)")
	}
	s.probeDSN = newSecretFlag(fs, "probe-dsn", probeEnv, "PostgreSQL `DSN` of a role with pg_monitor, direct (not through PgBouncer), to probe your service's database")
	s.pgbouncer = newSecretFlag(fs, "pgbouncer-admin-dsn", pgbouncerEnv, "PgBouncer admin console `DSN` (database \"pgbouncer\", a user in stats_users or admin_users; optional)")
	return s
}

// addSideFlags defines a sign-off side's own-service flags under prefix
// ("before-", "after-"): --before-target, --before-probe-dsn, … Those a
// side leaves out fall back to the command's shared ones (withDefaults).
func addSideFlags(fs *flag.FlagSet, prefix string) *serviceFlags {
	scratch := flag.NewFlagSet(prefix, flag.ContinueOnError)
	s := defineService(scratch, serviceParts{load: true, name: true}, "", "")
	s.prefix = prefix
	s.probeDSN.name, s.pgbouncer.name = prefix+s.probeDSN.name, prefix+s.pgbouncer.name
	side := strings.TrimSuffix(prefix, "-")
	scratch.VisitAll(func(f *flag.Flag) {
		usage := "the " + side + " build's: " + strings.ReplaceAll(f.Usage, "--", "--"+prefix)
		if f.Name != "target" && f.Name != "name" {
			usage += "; default: --" + strings.TrimSuffix(f.Name, "-file") + "'s"
		}
		fs.Var(f.Value, prefix+f.Name, usage)
	})
	return s
}

// addAlias defines alias as another spelling of the flag name, hidden
// from help.
func addAlias(fs *flag.FlagSet, alias, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("alias of undefined flag --" + name)
	}
	fs.Var(aliasValue{f.Value}, alias, "the same as --"+name)
}

// aliasValue marks a flag as another spelling of one in help: printFlags
// leaves it out.
type aliasValue struct{ flag.Value }

// IsBoolFlag lets a bool flag's alias go without a value (--insecure).
func (a aliasValue) IsBoolFlag() bool {
	b, ok := a.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// given: a flag of the service other than its probe secrets' environment
// was set on the command line.
func (s *serviceFlags) given() bool {
	return s.target != "" || s.name != "" || s.tokensFile != "" || s.metricsURL != "" ||
		s.probeDSN.given() || s.pgbouncer.given() || (s.conn != nil && s.conn.inUse())
}

// refuseWithout is the usage error for own-service flags given with no
// target to apply them to; what names the target's flag.
func (s *serviceFlags) refuseWithout(what string) error {
	if !s.given() {
		return nil
	}
	return fmt.Errorf("%w: --probe-dsn, --pgbouncer-admin-dsn, --metrics-url, --tokens-file, --name and the TLS/OAuth flags belong to %s (your own service)", errUsage, what)
}

// withDefaults fills what a sign-off side leaves out from the shared
// flags: probe DSNs, metrics URL and tokens file. The target and name are
// the side's own.
func (s *serviceFlags) withDefaults(shared *serviceFlags) {
	if s.metricsURL == "" {
		s.metricsURL = shared.metricsURL
	}
	if s.tokensFile == "" {
		s.tokensFile = shared.tokensFile
	}
	if !s.probeDSN.given() {
		s.probeDSN = shared.probeDSN
	}
	if !s.pgbouncer.given() {
		s.pgbouncer = shared.pgbouncer
	}
}

// external resolves the service's endpoints for a run on it: the probe
// DSNs, the tokens file read, the TLS settings of conn. A usage error
// when a probe that needs the database probe is given without it.
func (s *serviceFlags) external(conn runner.TargetOptions) (fixtures.External, error) {
	ext := fixtures.External{GatewayURL: s.target, GatewayMetricsURL: s.metricsURL, TLS: conn.TLS}
	var err error
	if ext.ProbeDSN, err = s.probeDSN.Value(); err != nil {
		return ext, err
	}
	if ext.PgBouncerAdminDSN, err = s.pgbouncer.Value(); err != nil {
		return ext, err
	}
	if ext.ProbeDSN == "" && (ext.PgBouncerAdminDSN != "" || ext.GatewayMetricsURL != "") {
		return ext, fmt.Errorf("%w: --%spgbouncer-admin-dsn and --%smetrics-url join the probes, which need a probe DSN (%s)", errUsage, s.prefix, s.prefix, s.probeDSN.Sources())
	}
	if s.tokensFile != "" {
		if ext.Tokens, err = readTokens(s.tokensFile); err != nil {
			return ext, fmt.Errorf("%w: --%stokens-file: %w", errUsage, s.prefix, err)
		}
	}
	return ext, nil
}

// runName is what a run against the service is called: --name, else the
// target's host and port (externalName).
func (s *serviceFlags) runName() string { return externalName(s.name, s.target) }

// readTokens reads bearer tokens, one a line; blank lines and # comments
// are skipped.
func readTokens(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokens file: %w", err)
	}
	var toks []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks = append(toks, line)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("tokens file %s holds no token", path)
	}
	return toks, nil
}

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

// targetFlags are how the engine reaches the user's own service: TLS and
// OAuth 2.1 client credentials. The client id and secret come from the
// environment or a file (a command line shows in ps) and go nowhere but
// the token endpoint.
type targetFlags struct {
	caFile   string
	insecure bool
	tokenURL string
	clientID *secretFlag
	secret   *secretFlag
	scopes   string
	audience string
	perUser  bool
	// getenv reads the environment (nil: os.Getenv).
	getenv func(string) string
}

func addTargetFlags(fs *flag.FlagSet) *targetFlags {
	t := &targetFlags{}
	fs.StringVar(&t.caFile, "ca-file", "", "https target: also trust the PEM certificates in `FILE` (a private or staging CA), besides the system roots")
	fs.BoolVar(&t.insecure, "insecure-skip-verify", false, "https target: do not verify the server's certificate (a self-signed staging server; anyone in the path can read the traffic)")
	fs.StringVar(&t.tokenURL, "oauth-token-url", "", "OAuth 2.1 client credentials: the token endpoint `URL` (or env LEAKBENCH_OAUTH_TOKEN_URL); the tokens it gives are the users' bearer tokens, refreshed before they expire")
	t.clientID = newSecretFlag(fs, "oauth-client-id", "LEAKBENCH_OAUTH_CLIENT_ID", "OAuth client `ID`")
	t.secret = newSecretFlag(fs, "oauth-client-secret", "LEAKBENCH_OAUTH_CLIENT_SECRET", "OAuth client `SECRET`")
	fs.StringVar(&t.scopes, "oauth-scopes", "", "OAuth: scopes to ask for, space- or comma-separated")
	fs.StringVar(&t.audience, "oauth-audience", "", "OAuth: the audience parameter some providers want")
	fs.BoolVar(&t.perUser, "oauth-token-per-user", false, "OAuth: a token of its own for every virtual user (default: one token shared by all)")
	return t
}

// options resolves the flags; oauth is nil when no token URL was given.
func (t *targetFlags) options() (runner.TargetOptions, error) {
	var o runner.TargetOptions
	tlsConf, err := mcp.TLSConfig(t.caFile, t.insecure)
	if err != nil {
		return o, fmt.Errorf("%w: --ca-file: %w", errUsage, err)
	}
	o.TLS, o.CAFile, o.Insecure = tlsConf, t.caFile, t.insecure
	tokenURL := t.tokenURL
	if tokenURL == "" && t.getenv != nil {
		tokenURL = t.getenv("LEAKBENCH_OAUTH_TOKEN_URL")
	} else if tokenURL == "" {
		tokenURL = os.Getenv("LEAKBENCH_OAUTH_TOKEN_URL")
	}
	id, err := t.clientID.Value()
	if err != nil {
		return o, err
	}
	secret, err := t.secret.Value()
	if err != nil {
		return o, err
	}
	if tokenURL == "" {
		if t.clientID.given() || t.secret.given() || t.perUser || t.scopes != "" || t.audience != "" {
			return o, fmt.Errorf("%w: the --oauth-* flags need --oauth-token-url (or LEAKBENCH_OAUTH_TOKEN_URL)", errUsage)
		}
		return o, nil
	}
	oc := &bearer.OAuthConfig{TokenURL: tokenURL, ClientID: id, ClientSecret: secret, Audience: t.audience, PerUser: t.perUser, TLS: tlsConf}
	oc.Scopes = strings.FieldsFunc(t.scopes, func(r rune) bool { return r == ' ' || r == ',' })
	if err := oc.Validate(); err != nil {
		return o, fmt.Errorf("%w: %w (client id: %s; secret: %s)", errUsage, err, t.clientID.Sources(), t.secret.Sources())
	}
	o.OAuth = oc
	return o, nil
}

// inUse: a TLS or OAuth setting was given, which only an external target
// can use.
func (t *targetFlags) inUse() bool {
	return t.caFile != "" || t.insecure || t.tokenURL != "" || t.clientID.given() || t.secret.given()
}

package main

import (
	"flag"
	"strings"

	"github.com/leakbench/leakbench/internal/app/ownservice"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// The own-service flags: how every command that loads or probes the
// user's own service (run, capacity, soak, signoff, probe) reaches it.
// They are defined here once, so that --target, --probe-dsn and the rest
// have the same name, help and default wherever they appear (#38); what
// they resolve to (endpoints, TLS, OAuth) is internal/app/ownservice's.
//
// The flag definitions below name each flag literally (fs.StringVar(…,
// "target", …)): the GitHub Action's test reads the CLI's flags from these
// sources. A side of a sign-off (--before-target …) gets the same flags
// under a prefix, copied from a scratch set (prefixed).

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
func addServiceFlags(c *cli, fs *flag.FlagSet, parts serviceParts) *ownservice.Service {
	s := defineService(fs, parts, "LEAKBENCH_PROBE_DSN", "LEAKBENCH_PGBOUNCER_ADMIN_DSN")
	s.ProbeDSN.Getenv, s.PgBouncer.Getenv = c.getenv, c.getenv
	if parts.load {
		s.Conn = addTargetFlags(fs)
		s.Conn.Getenv, s.Conn.ClientID.Getenv, s.Conn.Secret.Getenv = c.getenv, c.getenv, c.getenv
		cliflag.Alias(fs, "insecure", "insecure-skip-verify")
	}
	cliflag.Alias(fs, "dsn", "probe-dsn")
	cliflag.Alias(fs, "pgbouncer", "pgbouncer-admin-dsn")
	if parts.load {
		cliflag.Alias(fs, "scrape", "metrics-url")
	}
	return s
}

// defineService defines the flags of one service; the secrets fall back
// to the environment variables named (none: "").
func defineService(fs *flag.FlagSet, parts serviceParts, probeEnv, pgbouncerEnv string) *ownservice.Service {
	s := &ownservice.Service{}
	if parts.load {
		fs.StringVar(&s.Target, "target", "", "your MCP endpoint, any http(s) `URL` (https://staging.example.com/mcp); without --probe-dsn the run is load only and thresholds decide the exit code")
		fs.StringVar(&s.TokensFile, "tokens-file", "", "`FILE` of bearer tokens, one a line (default: the scenario's tokensFile or tokens)")
		fs.StringVar(&s.MetricsURL, "metrics-url", "", "your service's Prometheus endpoint `URL`, for its pool metrics (optional; needs a probe DSN)")
	}
	if parts.name {
		fs.StringVar(&s.Name, "name", "", "your service's `NAME` in reports, summary.json, compare and JUnit (default: the target's host and port)")
	}
	s.ProbeDSN = cliflag.NewSecret(fs, "probe-dsn", probeEnv, "PostgreSQL `DSN` of a role with pg_monitor, direct (not through PgBouncer), to probe your service's database")
	s.PgBouncer = cliflag.NewSecret(fs, "pgbouncer-admin-dsn", pgbouncerEnv, "PgBouncer admin console `DSN` (database \"pgbouncer\", a user in stats_users or admin_users; optional)")
	return s
}

// addSideFlags defines a sign-off side's own-service flags under prefix
// ("before-", "after-"): --before-target, --before-probe-dsn, … Those a
// side leaves out fall back to the command's shared ones (WithDefaults).
func addSideFlags(fs *flag.FlagSet, prefix string) *ownservice.Service {
	scratch := flag.NewFlagSet(prefix, flag.ContinueOnError)
	s := defineService(scratch, serviceParts{load: true, name: true}, "", "")
	s.Prefix = prefix
	s.ProbeDSN.Name, s.PgBouncer.Name = prefix+s.ProbeDSN.Name, prefix+s.PgBouncer.Name
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

// addTargetFlags defines the TLS and OAuth flags. The client id and
// secret are secret flags: a command line shows in ps.
func addTargetFlags(fs *flag.FlagSet) *ownservice.Conn {
	t := &ownservice.Conn{}
	fs.StringVar(&t.CAFile, "ca-file", "", "https target: also trust the PEM certificates in `FILE` (a private or staging CA), besides the system roots")
	fs.BoolVar(&t.Insecure, "insecure-skip-verify", false, "https target: do not verify the server's certificate (a self-signed staging server; anyone in the path can read the traffic)")
	fs.StringVar(&t.TokenURL, "oauth-token-url", "", "OAuth 2.1 client credentials: the token endpoint `URL` (or env LEAKBENCH_OAUTH_TOKEN_URL); the tokens it gives are the users' bearer tokens, refreshed before they expire")
	t.ClientID = cliflag.NewSecret(fs, "oauth-client-id", "LEAKBENCH_OAUTH_CLIENT_ID", "OAuth client `ID`")
	t.Secret = cliflag.NewSecret(fs, "oauth-client-secret", "LEAKBENCH_OAUTH_CLIENT_SECRET", "OAuth client `SECRET`")
	fs.StringVar(&t.Scopes, "oauth-scopes", "", "OAuth: scopes to ask for, space- or comma-separated")
	fs.StringVar(&t.Audience, "oauth-audience", "", "OAuth: the audience parameter some providers want")
	fs.BoolVar(&t.PerUser, "oauth-token-per-user", false, "OAuth: a token of its own for every virtual user (default: one token shared by all)")
	return t
}

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/app/runner"
)

// targetFlags are how `run` reaches the user's own service: TLS and
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
	tlsConf, err := runner.TLSConfig(t.caFile, t.insecure)
	if err != nil {
		return o, fmt.Errorf("%w: --ca-file: %v", errUsage, err)
	}
	o.TLS = tlsConf
	tokenURL := t.tokenURL
	if tokenURL == "" {
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
	oc := &runner.OAuthConfig{TokenURL: tokenURL, ClientID: id, ClientSecret: secret, Audience: t.audience, PerUser: t.perUser, TLS: tlsConf}
	oc.Scopes = strings.FieldsFunc(t.scopes, func(r rune) bool { return r == ' ' || r == ',' })
	if err := oc.Validate(); err != nil {
		return o, fmt.Errorf("%w: %v (client id: %s; secret: %s)", errUsage, err, t.clientID.Sources(), t.secret.Sources())
	}
	o.OAuth = oc
	return o, nil
}

// inUse: a TLS or OAuth setting was given, which only an external target
// can use.
func (t *targetFlags) inUse() bool {
	return t.caFile != "" || t.insecure || t.tokenURL != "" || t.clientID.given() || t.secret.given()
}

// loadOnlyVerdict: a load-only run has no leak checks, so its thresholds
// decide the exit code, as k6's do (99 when one failed).
func loadOnlyVerdict(sum *render.Summary) error {
	if sum == nil || !sum.Environment.LoadOnly || sum.Load == nil {
		return nil
	}
	if failed := render.FailedThresholds(sum); len(failed) > 0 {
		return fmt.Errorf("%w: %s", errVerdict, strings.Join(failed, "; "))
	}
	return nil
}

package ownservice

import (
	"fmt"
	"os"
	"strings"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// Conn is how the engine reaches the user's own service: TLS and OAuth
// 2.1 client credentials. The client id and secret come from the
// environment or a file (a command line shows in ps) and go nowhere but
// the token endpoint.
type Conn struct {
	// CAFile holds PEM certificates to trust besides the system roots
	// (--ca-file).
	CAFile string
	// Insecure skips verifying the server's certificate
	// (--insecure-skip-verify).
	Insecure bool
	// TokenURL is the OAuth token endpoint (--oauth-token-url; "": the
	// environment's LEAKBENCH_OAUTH_TOKEN_URL, else no OAuth).
	TokenURL string
	// ClientID and Secret are the OAuth client's credentials.
	ClientID *cliflag.Secret
	Secret   *cliflag.Secret
	// Scopes are the scopes to ask for, space- or comma-separated.
	Scopes string
	// Audience is the audience parameter some providers want.
	Audience string
	// PerUser gives every virtual user a token of its own.
	PerUser bool
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
}

// Options resolves the settings; OAuth is nil when no token URL was given.
func (t *Conn) Options() (runner.TargetOptions, error) {
	var o runner.TargetOptions
	tlsConf, err := mcp.TLSConfig(t.CAFile, t.Insecure)
	if err != nil {
		return o, fmt.Errorf("%w: --ca-file: %w", cliflag.ErrUsage, err)
	}
	o.TLS, o.CAFile, o.Insecure = tlsConf, t.CAFile, t.Insecure
	tokenURL := t.TokenURL
	if tokenURL == "" && t.Getenv != nil {
		tokenURL = t.Getenv("LEAKBENCH_OAUTH_TOKEN_URL")
	} else if tokenURL == "" {
		tokenURL = os.Getenv("LEAKBENCH_OAUTH_TOKEN_URL")
	}
	id, err := t.ClientID.Value()
	if err != nil {
		return o, err
	}
	secret, err := t.Secret.Value()
	if err != nil {
		return o, err
	}
	if tokenURL == "" {
		if t.ClientID.Given() || t.Secret.Given() || t.PerUser || t.Scopes != "" || t.Audience != "" {
			return o, fmt.Errorf("%w: the --oauth-* flags need --oauth-token-url (or LEAKBENCH_OAUTH_TOKEN_URL)", cliflag.ErrUsage)
		}
		return o, nil
	}
	oc := &bearer.OAuthConfig{TokenURL: tokenURL, ClientID: id, ClientSecret: secret, Audience: t.Audience, PerUser: t.PerUser, TLS: tlsConf}
	oc.Scopes = strings.FieldsFunc(t.Scopes, func(r rune) bool { return r == ' ' || r == ',' })
	if err := oc.Validate(); err != nil {
		return o, fmt.Errorf("%w: %w (client id: %s; secret: %s)", cliflag.ErrUsage, err, t.ClientID.Sources(), t.Secret.Sources())
	}
	o.OAuth = oc
	return o, nil
}

// InUse: a TLS or OAuth setting was given, which only an external target
// can use.
func (t *Conn) InUse() bool {
	return t.CAFile != "" || t.Insecure || t.TokenURL != "" || t.ClientID.Given() || t.Secret.Given()
}

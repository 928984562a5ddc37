package workers

import (
	"crypto/tls"
	"fmt"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// TLSSettings are an https target's settings as the user gave them
// (--ca-file, --insecure-skip-verify). A tls.Config cannot cross a
// process boundary; each worker builds its own from these, as the parent
// did (mcp.TLSConfig), from the same file on the same machine.
type TLSSettings struct {
	CAFile   string `json:"ca_file,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
}

// OAuthSettings are the OAuth client-credentials settings as given
// (--oauth-*). They hold the client secret: a worker gets them on its
// standard input with the rest of its Spec, never on its command line,
// and fetches and refreshes its own tokens.
type OAuthSettings struct {
	TokenURL     string   `json:"token_url"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Scopes       []string `json:"scopes,omitempty"`
	Audience     string   `json:"audience,omitempty"`
	PerUser      bool     `json:"per_user,omitempty"`
}

// NewOAuthSettings are c's settings, for a worker (nil: none).
func NewOAuthSettings(c *bearer.OAuthConfig) *OAuthSettings {
	if c == nil {
		return nil
	}
	return &OAuthSettings{TokenURL: c.TokenURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		Scopes: c.Scopes, Audience: c.Audience, PerUser: c.PerUser}
}

// reach builds a worker's TLS configuration and OAuth client from its
// Spec, as the parent built its own (nil, nil: a plain target).
func (sp *Spec) reach() (*tls.Config, *bearer.OAuthConfig, error) {
	var conf *tls.Config
	if sp.TLS != nil {
		var err error
		if conf, err = mcp.TLSConfig(sp.TLS.CAFile, sp.TLS.Insecure); err != nil {
			return nil, nil, fmt.Errorf("worker: --ca-file: %w", err)
		}
	}
	o := sp.OAuth
	if o == nil {
		return conf, nil, nil
	}
	oc := &bearer.OAuthConfig{TokenURL: o.TokenURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		Scopes: o.Scopes, Audience: o.Audience, PerUser: o.PerUser, TLS: conf}
	if err := oc.Validate(); err != nil {
		return nil, nil, fmt.Errorf("worker: %w", err)
	}
	return conf, oc, nil
}

package mcp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// TokenSource gives a session its bearer token at each request.
// Implementations must be safe for concurrent use and fast when the token
// is cached.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// OAuthConfig is an OAuth 2.1 client-credentials grant (RFC 6749 §4.4):
// the client's id and secret are exchanged at TokenURL for an access
// token, sent as the bearer token. It holds a secret: it is never
// serialized (no field has a JSON name) and never printed.
type OAuthConfig struct {
	TokenURL     string   `json:"-"`
	ClientID     string   `json:"-"`
	ClientSecret string   `json:"-"`
	Scopes       []string `json:"-"`
	// Audience, if set, is sent as the audience parameter (Auth0, Okta
	// and others want one).
	Audience string `json:"-"`
	// PerUser gives every virtual user a token of its own, fetched when it
	// first needs one; false: one token shared by all.
	PerUser bool `json:"-"`
	// TLS configures an https token endpoint (nil: the system roots).
	TLS *tls.Config `json:"-"`
}

// Validate checks that the configuration can fetch a token.
func (c *OAuthConfig) Validate() error {
	u, err := url.Parse(c.TokenURL)
	switch {
	case c.TokenURL == "":
		return errors.New("OAuth: no token URL")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("OAuth: token URL %s is not an http(s) URL", redact.URL(c.TokenURL))
	case c.ClientID == "":
		return errors.New("OAuth: no client id")
	case c.ClientSecret == "":
		return errors.New("OAuth: no client secret")
	}
	return nil
}

// tokenTimeout bounds one token request.
const tokenTimeout = 10 * time.Second

// NewOAuthTokens returns a token source for the client-credentials grant
// c. It fetches a token when first asked and again before the one it has
// expires: after four fifths of its lifetime, at most 30 s before its
// expiry. Concurrent callers share one fetch. Errors name the token
// endpoint (redacted) and the OAuth error code, never a secret.
func NewOAuthTokens(c OAuthConfig) TokenSource {
	cc := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
		Scopes: c.Scopes, AuthStyle: oauth2.AuthStyleInHeader}
	if c.Audience != "" {
		cc.EndpointParams = url.Values{"audience": {c.Audience}}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.TLSClientConfig = c.TLS
	return &oauthTokens{cc: cc, hc: &http.Client{Timeout: tokenTimeout, Transport: tr}, secret: c.ClientSecret}
}

type oauthTokens struct {
	cc     *clientcredentials.Config
	hc     *http.Client
	secret string

	cur atomic.Pointer[cachedToken]
	mu  sync.Mutex // one fetch at a time
}

type cachedToken struct {
	value   string
	refresh time.Time // fetch a new one from here on; zero: never expires
}

func (o *oauthTokens) Token(ctx context.Context) (string, error) {
	if t := o.cur.Load(); t != nil && (t.refresh.IsZero() || time.Now().Before(t.refresh)) {
		return t.value, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.cur.Load(); t != nil && (t.refresh.IsZero() || time.Now().Before(t.refresh)) {
		return t.value, nil // another caller fetched it meanwhile
	}
	got := time.Now()
	tok, err := o.cc.Token(context.WithValue(ctx, oauth2.HTTPClient, o.hc))
	if err != nil {
		return "", o.describe(err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("OAuth token endpoint %s: answer holds no access_token", redact.URL(o.cc.TokenURL))
	}
	t := &cachedToken{value: tok.AccessToken}
	if !tok.Expiry.IsZero() {
		life := tok.Expiry.Sub(got)
		t.refresh = tok.Expiry.Add(-min(life/5, 30*time.Second))
	}
	o.cur.Store(t)
	return t.value, nil
}

// describe says why a token request failed without quoting the answer's
// body (which may echo what was sent).
func (o *oauthTokens) describe(err error) error {
	where := redact.URL(o.cc.TokenURL)
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = "no OAuth error code"
		}
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		return fmt.Errorf("OAuth token endpoint %s refused the client credentials: HTTP %d (%s)", where, status, redact.Literal(code, o.secret))
	}
	return fmt.Errorf("OAuth token endpoint %s: %s", where, redact.Literal(err.Error(), o.secret))
}

// StaticTokens is a TokenSource that always gives the same token.
type StaticTokens string

// Token returns the token.
func (s StaticTokens) Token(context.Context) (string, error) { return string(s), nil }

package bearer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

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

// RefreshingTokenSource is a TokenSource that can drop a token the
// target refused: after Invalidate(token), Token fetches a new one
// (unless another caller already replaced that token). A session whose
// request is answered 401 invalidates its token and sends the request
// once more with a new one; only a second 401 is a failure, of kind
// auth. [NewOAuthTokens] returns one.
type RefreshingTokenSource interface {
	TokenSource
	Invalidate(token string)
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

// oauthMaxConns bounds the connections to one token endpoint, open and
// idle: users fetching their tokens at once (per-user tokens, a ramp's
// start) queue for them instead of opening one each. A token request
// takes milliseconds: 3,000 users at once get theirs within a second or
// two, far inside tokenTimeout.
const oauthMaxConns = 64

// oauthTransports holds the token requests' transports, one per TLS
// configuration (by pointer: the engine's per-user token sources are
// made from one OAuthConfig), so that per-user tokens share one
// transport and its idle connections instead of cloning one per user,
// never closed. An entry goes when its TLS configuration is collected.
var oauthTransports sync.Map // weak.Pointer[tls.Config] → *http.Transport

// oauthTransport returns the shared transport for token requests made
// with tlsConf (nil: the system roots).
func oauthTransport(tlsConf *tls.Config) *http.Transport {
	key := weak.Make(tlsConf) // nil gives the zero weak pointer: one entry for all nil
	if tr, ok := oauthTransports.Load(key); ok {
		return tr.(*http.Transport)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The proxy of the environment (HTTPS_PROXY, NO_PROXY), as every
	// other HTTP client of the machine: a token endpoint outside is
	// often behind one. (The target is not: MCP requests go direct.)
	tr.Proxy = http.ProxyFromEnvironment
	tr.TLSClientConfig = tlsConf
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = oauthMaxConns, oauthMaxConns
	got, loaded := oauthTransports.LoadOrStore(key, tr)
	if !loaded && tlsConf != nil {
		runtime.AddCleanup(tlsConf, func(key weak.Pointer[tls.Config]) {
			if tr, ok := oauthTransports.LoadAndDelete(key); ok {
				tr.(*http.Transport).CloseIdleConnections()
			}
		}, key)
	}
	return got.(*http.Transport)
}

// NewOAuthTokens returns a token source for the client-credentials grant
// c. It fetches a token when first asked and again before the one it has
// expires: after four fifths of its lifetime, at most 30 s before its
// expiry, or once the target refused it (Invalidate). Concurrent callers
// share one fetch. All token sources with the same c.TLS share one
// transport (at most oauthMaxConns connections to the endpoint), which
// takes its proxy from the environment (HTTPS_PROXY, NO_PROXY). Errors
// name the token endpoint (redacted) and the OAuth error code, never a
// secret.
func NewOAuthTokens(c OAuthConfig) RefreshingTokenSource {
	cc := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
		Scopes: c.Scopes, AuthStyle: oauth2.AuthStyleInHeader}
	if c.Audience != "" {
		cc.EndpointParams = url.Values{"audience": {c.Audience}}
	}
	return &oauthTokens{cc: cc, hc: &http.Client{Timeout: tokenTimeout, Transport: oauthTransport(c.TLS)}, secret: c.ClientSecret}
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

// Invalidate drops token if it is still the current one, so that the
// next Token fetches a new one; a token already replaced (another user
// got the same 401 first) is left alone: one refresh for all.
func (o *oauthTokens) Invalidate(token string) {
	if t := o.cur.Load(); t != nil && t.value == token {
		o.cur.CompareAndSwap(t, nil)
	}
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

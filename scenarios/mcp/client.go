package mcp

// The client is hand-written on purpose instead of using the go-sdk client
// (mcp.Client + mcp.StreamableClientTransport): the SDK keeps, per session,
// several goroutines and a standalone SSE GET stream open for server-initiated
// messages, which costs memory and a connection per virtual user and makes
// thousands of virtual users on a laptop measure the load generator rather
// than the target. A load-test user only needs request/response: an idle
// Session here is a few small fields and, by default, one keep-alive
// connection of its own (as a real client has), with no goroutine; with
// ClientOptions.SharedConns all sessions share one pool instead
// (package internal/h1).

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// ProtocolVersion is the MCP protocol version the initialize handshake
// asks for when the version is negotiated rather than pinned (the
// setting ""); see [VersionAuto] for the setting that also speaks
// 2026-07-28.
const ProtocolVersion = "2025-06-18"

// acceptedVersions are the versions the client can speak: Streamable HTTP
// with the semantics implemented here.
var acceptedVersions = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// SupportedVersions lists the handshake-era (2025) protocol versions the
// client can speak, oldest first; a scenario may pin any of them. The
// sessionless revision and the auto setting are [Version20260728] and
// [VersionAuto]; [ValidVersionSetting] accepts all of them.
var SupportedVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25"}

// Defaults for ClientOptions.
const (
	DefaultRequestTimeout = 10 * time.Second
	defaultClientName     = "leakbench"
	defaultClientVersion  = "0.1.0"
	maxListPages          = 100                   // bound on */list pagination
	drainGrace            = 50 * time.Millisecond // wait for the end of an SSE stream, to reuse the connection
	drainLimit            = 64 << 10
)

// ClientOptions configures a [Client].
type ClientOptions struct {
	// RequestTimeout bounds every request; when it fires the request is
	// abandoned and its connection closed. Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxConns is the expected number of concurrent sessions; the idle
	// connection pool is sized for it. Default 100.
	MaxConns int
	// ClientName and ClientVersion go into initialize's clientInfo.
	// Defaults "leakbench" and this package's version.
	ClientName, ClientVersion string
	// Headers are sent with every request. They cannot replace the headers
	// the protocol needs (Accept, Content-Type, Mcp-Session-Id, ...).
	Headers map[string]string
	// ProtocolVersion chooses the protocol the sessions speak (see
	// [ValidVersionSetting]):
	//   - "" (today's default): the initialize handshake, asking for
	//     [ProtocolVersion] and accepting any of [SupportedVersions];
	//   - one of [SupportedVersions]: that version pinned — initialize
	//     asks for it and fails unless the server agrees;
	//   - [Version20260728]: the sessionless revision — Initialize sends
	//     server/discover and fails unless the server offers it;
	//   - [VersionAuto]: server/discover first, 2026-07-28 when the
	//     server offers it, else the handshake (as go-sdk's client does).
	// [Session.Pin] overrides it per session; [Session.Era] and
	// [Session.ProtocolVersion] tell what a session ended up speaking.
	ProtocolVersion string
	// SharedConns, when above 0, makes all sessions share one keep-alive
	// pool of at most that many idle connections (for peak-rate tests);
	// 0 gives each session a connection of its own, as real clients have.
	SharedConns int
	// TLS configures https targets (nil: the system roots); see
	// [TLSConfig].
	TLS *tls.Config
	// SourceAddrs, if set, are the local addresses connections are
	// dialed from, in turn (nil: the kernel's choice); a run with more
	// connections than one address has local ports spreads them.
	SourceAddrs []netip.Addr
	// Tokens, if set, gives each session its bearer token at each request
	// (OAuth client credentials, refreshed before expiry; see
	// [bearer.NewOAuthTokens]); the session's own token is then ignored.
	Tokens bearer.TokenSource
}

// Client holds what all sessions share: the target and its connection pool.
// It is safe for concurrent use.
type Client struct {
	target  string
	timeout time.Duration
	info    clientInfo
	tr      *h1.Transport // nil if target is not a usable URL
	head    []byte        // header lines every request carries
	meta    [4][]byte     // the 2026-07-28 _meta members requests carry, by what they declare (era.go)
	headErr error         // an invalid extra header
	pin     string
	shared  bool               // sessions share the transport's pool
	tokens  bearer.TokenSource // nil: sessions' static tokens
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// NewClient returns a client for the MCP endpoint at target
// (e.g. "http://127.0.0.1:8080/mcp").
func NewClient(target string, opts ClientOptions) *Client {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 100
	}
	if opts.ClientName == "" {
		opts.ClientName = defaultClientName
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = defaultClientVersion
	}
	c := &Client{
		target:  target,
		timeout: opts.RequestTimeout,
		info:    clientInfo{Name: opts.ClientName, Version: opts.ClientVersion},
		pin:     opts.ProtocolVersion,
		shared:  opts.SharedConns > 0,
		tokens:  opts.Tokens,
	}
	maxIdle := opts.MaxConns
	if opts.SharedConns > 0 {
		maxIdle = opts.SharedConns
	}
	// Proxies are never used: load goes straight to the target. Redirects
	// are never followed (to another host, say): a 3xx is an answer.
	if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		c.tr = h1.New(u, opts.RequestTimeout, maxIdle, opts.TLS)
		c.tr.SetSourceAddrs(opts.SourceAddrs)
	}
	h := []byte("User-Agent: " + opts.ClientName + "/" + opts.ClientVersion + "\r\nAccept: application/json, text/event-stream\r\n")
	if strings.ContainsAny(opts.ClientName+opts.ClientVersion, "\r\n") {
		c.headErr = errors.New("client name or version contains a line break")
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Headers)) {
		v := opts.Headers[k]
		if k == "" || strings.ContainsAny(k, "\r\n: ") || strings.ContainsAny(v, "\r\n\x00") {
			c.headErr = fmt.Errorf("header %q is not a valid header line", textutil.Truncate(k, 40))
		}
		h = append(h, http.CanonicalHeaderKey(k)+": "+v+"\r\n"...)
	}
	c.head = h
	c.meta = buildMetas(c.info)
	return c
}

// CloseIdleConnections closes the pooled keep-alive connections. Call it when
// done with the client so that no connection goroutine outlives it.
func (c *Client) CloseIdleConnections() {
	if c.tr != nil {
		c.tr.CloseIdle()
	}
}

// NewSession returns an uninitialized session that authenticates with token
// (no Authorization header if token is empty), or with the client's
// ClientOptions.Tokens if set.
func (c *Client) NewSession(token string) *Session {
	s := &Session{c: c, token: token, pin: c.pin, badToken: strings.ContainsAny(token, "\r\n"), tokens: c.tokens}
	if !c.shared {
		s.slot = new(h1.Slot)
	}
	return s
}

// SetTokens makes the session take its bearer token from ts at each
// request (one token source per user), instead of the client's.
func (s *Session) SetTokens(ts bearer.TokenSource) { s.tokens = ts }

// CloseConn closes the session's own connection, if it has one; the next
// request dials a new one. Call it when the user stops.
func (s *Session) CloseConn() { s.slot.Close() }

// Session is one MCP session: one virtual user. It is not safe for
// concurrent use: a user sends one request at a time.
type Session struct {
	c         *Client
	token     string
	id        string // Mcp-Session-Id; "" for stateless servers
	version   string // negotiated protocol version; "" before Initialize
	pin       string // the protocol setting (ClientOptions.ProtocolVersion)
	era       Era    // the era Initialize settled on; EraNone before
	nextID    int64
	sessioned bool // the last request carried a session id
	badToken  bool // the token holds a line break: nothing can be sent
	// rawOnce keeps the result of the request being sent in last, as
	// keep does, for CallTool to look into without decoding it into a
	// struct of its own (requests.go); it takes no room of its own.
	rawOnce bool
	// uncacheable: a page of the listing (or the read) being fetched may
	// not be cached (cache.go); beside rawOnce, it takes no room either.
	uncacheable bool
	// refused: the last request was answered 401 with a token fetched
	// anew for it (send), which statusError counts as KindAuth.
	refused bool
	slot    *h1.Slot           // the session's own connection; nil: the shared pool
	tokens  bearer.TokenSource // nil: token is fixed
	trace   traceCarrier       // the trace context of the request being sent (trace.go)
	ids     traceIDs           // a trace context set with SetTrace (trace.go)

	// The request being sent speaks 2026-07-28: meta (the client's
	// _meta members) goes into its params, and method and name into its
	// Mcp-Method and Mcp-Name headers (era.go). nil and "" otherwise.
	meta            []byte
	rpcMethod, name string

	// keep: the result of the last request is kept (Result), for
	// captures and checks (answer.go).
	keep bool
	// accept: the result types other than complete the request being
	// sent can take (acceptInputs, acceptTask; roundtrips.go). cache:
	// list and read results are served from the user's cache while
	// fresh (cache.go). Beside keep, they take no room of their own.
	accept uint8
	cache  bool
	last   []byte

	// x holds what only sessions using the 2026-07-28 features need
	// (roundtrips.go), allocated on first use so that an idle session
	// stays small.
	x *sessionExtras

	// Set with SetTimeouts: a request timeout other than the client's,
	// and a delay after which the caller gives up (0: never).
	timeout, abortAfter time.Duration
}

// ID returns the Mcp-Session-Id the server assigned ("" if none).
func (s *Session) ID() string { return s.id }

// ProtocolVersion returns the protocol version the session speaks: the
// one negotiated by initialize, or [Version20260728] ("" before
// Initialize).
func (s *Session) ProtocolVersion() string { return s.version }

// Era returns the era the session speaks: [Era2025] after an initialize
// handshake, [Era2026] when Initialize settled on 2026-07-28, [EraNone]
// before Initialize and after Close.
func (s *Session) Era() Era { return s.era }

// Pin sets the protocol setting the next Initialize uses: any value
// [ValidVersionSetting] accepts, as ClientOptions.ProtocolVersion, which
// it overrides for this session.
func (s *Session) Pin(version string) { s.pin = version }

// SetTimeouts sets, for the requests that follow, a request timeout other
// than the client's (0: the client's), and a delay after which the caller
// gives up on purpose and closes the connection (0: never), counted as
// KindAborted. Closing a session (DELETE) is never aborted.
func (s *Session) SetTimeouts(timeout, abortAfter time.Duration) {
	s.timeout, s.abortAfter = timeout, abortAfter
}

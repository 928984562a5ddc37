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
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/leakbench/leakbench/internal/redact"
	"github.com/leakbench/leakbench/scenarios/internal/h1"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
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
	// Tokens, if set, gives each session its bearer token at each request
	// (OAuth client credentials, refreshed before expiry; see
	// [NewOAuthTokens]); the session's own token is then ignored.
	Tokens TokenSource
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
	shared  bool        // sessions share the transport's pool
	tokens  TokenSource // nil: sessions' static tokens
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
func (s *Session) SetTokens(ts TokenSource) { s.tokens = ts }

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
	slot        *h1.Slot     // the session's own connection; nil: the shared pool
	tokens      TokenSource  // nil: token is fixed
	trace       traceCarrier // the trace context of the request being sent (trace.go)
	ids         traceIDs     // a trace context set with SetTrace (trace.go)

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

// call sends a JSON-RPC request with the given params (raw JSON, or nil)
// and decodes its result into out (if non-nil). op is also the method;
// name is what its Mcp-Name header carries in the 2026-07-28 era (the
// tool's or prompt's name, the resource's URI; "" for other methods). It
// returns the answer's Mcp-Session-Id.
func (s *Session) call(ctx context.Context, op, name string, params []byte, out any) (string, error) {
	s.nextID++
	id := s.nextID
	s.last = nil
	if s.x != nil {
		s.x.pending, s.x.pendingType, s.x.cached = nil, "", false
	}
	s.inject(ctx)
	// The body, _meta included, is built in a pooled buffer: the
	// transport copies it out before send returns.
	bb := getBuf()
	body := append((*bb)[:0], `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":"`...)
	body = append(body, op...) // one of our own method constants: no escaping needed
	body = append(body, '"')
	body = s.appendParams(body, params) // with the trace context (and 2026-07-28's members) in _meta
	body = append(body, '}')
	if s.meta != nil {
		s.rpcMethod, s.name = op, name
	}
	resp, w, err := s.send(ctx, op, http.MethodPost, body, true)
	putBuf(bb, body)
	s.trace, s.rpcMethod, s.name = traceCarrier{}, "", "" // only this request's headers carry them
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", s.statusError(op, resp)
	}
	mediaType := baseMediaType(resp.ContentType)
	rr, err := parseResponse(mediaType, resp.Body, id)
	if err != nil {
		return "", s.bodyError(ctx, w, op, err)
	}
	if mediaType == mediaSSE {
		// Let the stream end so the connection can be reused, but do not
		// wait for a server that keeps it open: past the grace, the read
		// fails and the connection is closed, never pooled.
		w.Shorten(drainGrace)
		drain(resp.Body)
	}
	if rr.Error != nil {
		return "", &Error{Kind: KindJSONRPC, Op: op, Code: rr.Error.Code, Msg: s.redact(s.sessionHint(textutil.Truncate(rr.Error.Message, 200)))}
	}
	if s.meta != nil {
		rt, err := s.modernAnswer(op, rr.Result, resp.SessionID)
		if err != nil {
			return "", err
		}
		if rt != "" { // input_required or a task: the caller goes on (roundtrips.go)
			s.ext().pending, s.x.pendingType = rr.Result, rt
			return resp.SessionID, nil
		}
		if s.cache {
			s.noteTTL(op, rr.Result) // cache.go
		}
	}
	if s.keep || s.rawOnce {
		s.last = rr.Result // a copy of its own (decodeMessage)
	}
	if out != nil {
		if err := unmarshalResult(rr.Result, out); err != nil {
			return "", &Error{Kind: KindProtocol, Op: op, Msg: s.redact("malformed " + op + " result: " + jsonErrMsg(err))}
		}
	}
	return resp.SessionID, nil
}

// send sends one HTTP request under the per-request timeout, or under the
// scenario's abortAfter delay if abortable and that comes first. On success
// the caller must close the body, which ends the request; the watch tells
// whether its deadline fired, and can abort it.
func (s *Session) send(ctx context.Context, op, method string, body []byte, abortable bool) (*h1.Response, *h1.Watch, error) {
	switch {
	case s.c.tr == nil:
		return nil, nil, &Error{Kind: KindProtocol, Op: op, Msg: "target is not an http(s) URL"}
	case s.c.headErr != nil:
		return nil, nil, &Error{Kind: KindProtocol, Op: op, Msg: s.c.headErr.Error()}
	case s.badToken:
		return nil, nil, &Error{Kind: KindProtocol, Op: op, Msg: "bearer token contains a line break"}
	case ctx.Err() != nil:
		return nil, nil, &Error{Kind: KindCanceled, Op: op, Err: context.Cause(ctx)}
	}
	if s.tokens != nil {
		tok, err := s.tokens.Token(ctx)
		if err != nil {
			return nil, nil, &Error{Kind: KindAuth, Op: op, Msg: redact.String(err.Error())}
		}
		if strings.ContainsAny(tok, "\r\n") {
			return nil, nil, &Error{Kind: KindAuth, Op: op, Msg: "the token endpoint's access token contains a line break"}
		}
		s.token = tok
	}
	timeout, cause := s.c.timeout, errRequestTimeout
	if s.timeout > 0 {
		timeout = s.timeout
	}
	if abortable && s.abortAfter > 0 && s.abortAfter < timeout {
		timeout, cause = s.abortAfter, errAborted
	}
	hb := headBufs.Get().(*[]byte)
	h := append((*hb)[:0], s.c.head...)
	if body != nil {
		h = append(h, "Content-Type: application/json\r\n"...)
	}
	if s.token != "" {
		h = append(h, "Authorization: Bearer "...)
		h = append(h, s.token...)
		h = append(h, "\r\n"...)
	}
	s.sessioned = s.id != ""
	if s.id != "" {
		h = append(h, "Mcp-Session-Id: "...)
		h = append(h, s.id...)
		h = append(h, "\r\n"...)
	}
	if s.version != "" {
		h = append(h, "Mcp-Protocol-Version: "...)
		h = append(h, s.version...)
		h = append(h, "\r\n"...)
	}
	h = s.appendTraceHeaders(h)
	h = s.appendStandardHeaders(h)
	resp, w, err := s.c.tr.RoundTrip(ctx, s.slot, time.Now().Add(timeout), cause, method, h, body)
	*hb = h
	headBufs.Put(hb)
	if err != nil {
		// A malformed head is quoted in the error, and the target may
		// have echoed the token into it.
		return nil, nil, s.scrub(transportError(ctx, w.Expired(), op, err))
	}
	return resp, w, nil
}

var headBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// bufs recycles the buffers request bodies and params are built in, so
// that a request allocates none (getBuf, putBuf).
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

// putBuf gives back bp, holding b (bp's buffer, perhaps grown), unless it
// grew too large to keep alive.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		bufs.Put(bp)
	}
}

// statusError builds the error for a non-2xx answer, with a sanitized
// snippet of its body for diagnosis.
func (s *Session) statusError(op string, resp *h1.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, rpcErrorLen))
	drain(resp.Body)
	e := &Error{Kind: KindHTTP, Op: op, Status: resp.StatusCode, Msg: s.redact(s.sessionHint(snippet(body)))}
	// A 2026-07-28 server answers a request it rejects with 4xx and a
	// JSON-RPC error (an unknown tool, UnsupportedProtocolVersion,
	// HeaderMismatch, ...): its code tells a modern server from a legacy
	// one (era.go), and for a 2026-07-28 request it is the answer — a
	// JSON-RPC error, as the same refusal is in the 2025 era, so that runs
	// of both eras compare kind by kind.
	if baseMediaType(resp.ContentType) == mediaJSON {
		var m struct {
			JSONRPC string    `json:"jsonrpc"`
			Error   *rpcError `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil && m.JSONRPC == "2.0" && m.Error != nil {
			e.Code = m.Error.Code
			if s.meta != nil && resp.StatusCode/100 == 4 {
				e.Kind, e.Msg = KindJSONRPC, s.redact(s.sessionHint(textutil.Truncate(m.Error.Message, 200)))
			}
		}
	}
	if resp.StatusCode == http.StatusNotFound && s.sessioned {
		e.expired = true
	}
	return e
}

// bodyError classifies a failure while reading an answer body.
func (s *Session) bodyError(ctx context.Context, w *h1.Watch, op string, err error) error {
	return s.scrub(transportError(ctx, w.Expired(), op, err))
}

// scrub removes the session's bearer token from e's message and from the
// text of the error it wraps (which then no longer unwraps: its kind is
// already decided).
func (s *Session) scrub(e *Error) *Error {
	e.Msg = s.redact(e.Msg)
	if e.Err != nil && s.token != "" {
		if msg := e.Err.Error(); s.redact(msg) != msg {
			e.Err = errors.New(s.redact(msg))
		}
	}
	return e
}

// redact removes the session's bearer token from text that came from the
// target (a hostile or careless server may echo it back, whole or cut
// before a "…"), and any other secret redact finds.
func (s *Session) redact(text string) string { return redact.Literal(text, s.token) }

// snippetLen bounds how much of an answer an error quotes.
const snippetLen = 256

// rpcErrorLen bounds how much of an error answer is read to find a
// JSON-RPC error in it.
const rpcErrorLen = 4 << 10

// snippet is the start of an answer, printable on one line, for an error
// to quote (not yet redacted).
func snippet(b []byte) string {
	msg := cleanSnippet(b[:min(len(b), snippetLen)])
	if len(b) > snippetLen {
		msg += "…" // marks the cut, so that redact.Literal sees a token cut there
	}
	return msg
}

// cleanSnippet makes a body prefix printable on one line.
func cleanSnippet(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b))
	return strings.Join(strings.Fields(s), " ")
}

// drain reads what is left of a body (up to a bound), so that the
// keep-alive connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, drainLimit)) }

// baseMediaType returns the lower-case media type without parameters.
func baseMediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

package starter

// Reaching the service: the official go-sdk client over an HTTP client
// that adds the bearer token and headers, bounds every answer, and
// remembers what the last one was, so that a target that is not MCP gets
// an error saying what it answered instead of a JSON decoder's complaint.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// maxPages bounds every */list: a server whose cursors never end is cut.
const maxPages = 1000

// transport adds the token and headers to every request, bounds every
// answer's body, and records the last answer's status and type.
type transport struct {
	base    http.RoundTripper
	token   string
	tokens  bearer.TokenSource
	headers map[string]string

	mu                sync.Mutex
	status            int
	contentType, body string
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	token := t.token
	if t.tokens != nil {
		var err error
		if token, err = t.tokens.Token(r.Context()); err != nil {
			return nil, fmt.Errorf("get a bearer token: %w", err)
		}
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = &boundedBody{ReadCloser: res.Body, left: MaxAnswerBytes}
	t.mu.Lock()
	t.status, t.contentType = res.StatusCode, res.Header.Get("Content-Type")
	t.mu.Unlock()
	if res.StatusCode >= 300 && r.Method == http.MethodPost {
		// Keep the start of an error answer: it says what the target is.
		head, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		t.mu.Lock()
		t.body = strings.Join(strings.Fields(string(head)), " ")
		t.mu.Unlock()
		res.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(strings.NewReader(string(head)), res.Body), res.Body}
	}
	return res, nil
}

// last describes the last answer ("http 404 text/html: <h1>Not Found"),
// "" when none came.
func (t *transport) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == 0 {
		return ""
	}
	s := fmt.Sprintf("http %d", t.status)
	if t.contentType != "" {
		s += " " + t.contentType
	}
	if t.body != "" {
		s += ": " + truncate(t.body, 120)
	}
	return s
}

// boundedBody fails a body longer than its bound, so that an enormous
// answer is an error, not memory.
type boundedBody struct {
	io.ReadCloser
	left int64
}

var errTooLarge = fmt.Errorf("an answer larger than %d bytes", MaxAnswerBytes)

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// logNotes is a slog handler keeping the go-sdk client's warnings and
// errors (a tool it excluded from tools/list, say) as notes.
type logNotes struct {
	mu    sync.Mutex
	notes []string
}

func (l *logNotes) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }
func (l *logNotes) WithAttrs([]slog.Attr) slog.Handler            { return l }
func (l *logNotes) WithGroup(string) slog.Handler                 { return l }
func (l *logNotes) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.notes) < 20 {
		l.notes = append(l.notes, "the MCP client: "+truncate(msg, 200))
	}
	return nil
}

// conn is a session with the service.
type conn struct {
	timeout time.Duration // of each request
	cs      *sdk.ClientSession
	tr      *transport
	logs    *logNotes
}

// connect opens a session, the era chosen as the go-sdk client does.
func connect(ctx context.Context, o Options) (*conn, error) {
	hc := o.HTTPClient
	if hc == nil {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.TLSClientConfig = o.TLS
		// A backstop only: each request runs under its own deadline
		// (o.Timeout), which says what happened when it fires.
		hc = &http.Client{Transport: base, Timeout: o.Timeout + 5*time.Second}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	tr := &transport{base: base, token: o.Token, tokens: o.Tokens, headers: o.Headers}
	hc = &http.Client{Transport: tr, Timeout: hc.Timeout, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}
	logs := &logNotes{}
	client := sdk.NewClient(&sdk.Implementation{Name: "leakbench-init", Version: "0.1.0"}, &sdk.ClientOptions{Logger: slog.New(logs)})
	// server/discover, then maybe initialize: two requests' time.
	cctx, cancel := context.WithTimeout(ctx, 2*o.Timeout)
	defer cancel()
	cs, err := client.Connect(cctx, &sdk.StreamableClientTransport{Endpoint: o.Target, HTTPClient: hc,
		MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, notMCP(ctx, tr, err)
	}
	return &conn{timeout: o.Timeout, cs: cs, tr: tr, logs: logs}, nil
}

// notMCP explains a failed connect: ErrNotMCP when the target answered
// but not as MCP; the error as it is when nothing answered (refused,
// timed out) or when it asked for credentials.
func notMCP(ctx context.Context, tr *transport, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("connect: %w", ctx.Err())
	}
	last := tr.last()
	switch {
	case last == "":
		return fmt.Errorf("connect: %w", err)
	case tr.status == http.StatusUnauthorized || tr.status == http.StatusForbidden:
		return fmt.Errorf("connect: the target refused the credentials (%s): give a bearer token or OAuth settings: %w", last, err)
	case errors.Is(err, errTooLarge) || strings.Contains(err.Error(), errTooLarge.Error()):
		// The SDK's error keeps the text, not the chain.
		return fmt.Errorf("connect: the target sent %w", errTooLarge)
	}
	return fmt.Errorf("%w: it answered %s (%w)", ErrNotMCP, last, err)
}

func (c *conn) close() { _ = c.cs.Close() }

// listTools lists the tools page by page, handing each to f until it
// returns false or maxListed were seen; cut reports a listing stopped
// short (by f, the bound or a cursor that repeats).
func (c *conn) listTools(ctx context.Context, f func(*sdk.Tool) bool) (seen int, cut bool, err error) {
	p := &sdk.ListToolsParams{}
	for range maxPages {
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		res, err := c.cs.ListTools(rctx, p)
		cancel()
		if err != nil {
			return seen, false, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range res.Tools {
			seen++
			if seen > maxListed || !f(t) {
				return seen - 1, true, nil
			}
		}
		if res.NextCursor == "" {
			return seen, false, nil
		}
		if res.NextCursor == p.Cursor {
			return seen, true, nil
		}
		p = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	return seen, true, nil
}

// listResources lists up to max resources (every page, as far as that).
func (c *conn) listResources(ctx context.Context, max int) ([]Resource, error) {
	var out []Resource
	p := &sdk.ListResourcesParams{}
	for range maxPages {
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		res, err := c.cs.ListResources(rctx, p)
		cancel()
		if err != nil {
			return out, fmt.Errorf("resources/list: %w", err)
		}
		for _, r := range res.Resources {
			if r == nil {
				continue
			}
			if len(out) == max {
				return out, nil
			}
			out = append(out, Resource{URI: r.URI, Name: r.Name})
		}
		if res.NextCursor == "" || res.NextCursor == p.Cursor {
			return out, nil
		}
		p = &sdk.ListResourcesParams{Cursor: res.NextCursor}
	}
	return out, nil
}

// listPrompts lists up to max prompts.
func (c *conn) listPrompts(ctx context.Context, max int) ([]Prompt, error) {
	var out []Prompt
	p := &sdk.ListPromptsParams{}
	for range maxPages {
		rctx, cancel := context.WithTimeout(ctx, c.timeout)
		res, err := c.cs.ListPrompts(rctx, p)
		cancel()
		if err != nil {
			return out, fmt.Errorf("prompts/list: %w", err)
		}
		for _, pr := range res.Prompts {
			if pr == nil {
				continue
			}
			if len(out) == max {
				return out, nil
			}
			q := Prompt{Name: pr.Name, Description: oneLine(pr.Description, 100)}
			for _, a := range pr.Arguments {
				if a != nil {
					q.Arguments = append(q.Arguments, PromptArgument{Name: a.Name, Required: a.Required})
				}
			}
			out = append(out, q)
		}
		if res.NextCursor == "" || res.NextCursor == p.Cursor {
			return out, nil
		}
		p = &sdk.ListPromptsParams{Cursor: res.NextCursor}
	}
	return out, nil
}

// truncate cuts s to n bytes (on a rune boundary) with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// oneLine makes s a single line fit for a YAML comment, at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	return truncate(strings.Join(strings.Fields(s), " "), n)
}

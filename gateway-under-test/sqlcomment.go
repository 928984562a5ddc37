package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context into SQL (sqlcommenter). Every statement a request's
// database session sends — token scoping's, the tools' — ends in a
// sqlcommenter comment naming the request's W3C trace context, so that
// pg_stat_activity shows which request a stuck session belongs to:
//
//	SELECT … /*application='mcp-gateway',route='tools%2Fcall',traceparent='00-4bf9…-00f0…-01'*/
//
// Keys sorted, values URL-encoded (as JavaScript's encodeURIComponent)
// and then single quotes escaped, as the sqlcommenter specification
// says. The traceparent is the request's own — the traceparent header,
// or params._meta.traceparent (MCP 2026-07-28, SEP-414) — when it is of
// the W3C form; a request without a valid one gets no comment. The route
// is the MCP method.
//
// Prepared statements: each comment makes a new statement text. The
// store's connections use pgx's exec mode (unnamed statements, no cache
// by text; see openStore), so a new text per request costs nothing
// beyond its bytes; with a statement or describe cache every request
// would add an entry and evict the real ones, and named statements would
// break under PgBouncer 1.18's transaction pooling anyway. BEGIN, COMMIT
// and ROLLBACK are sent without a comment: they are the same for every
// request, and the statement an idle-in-transaction session shows is the
// last one that did the work.

const sqlApplication = "mcp-gateway"

type sqlCommentKey struct{}

// withSQLComment returns ctx carrying the comment for the statements of
// sessions opened under it ("" leaves ctx as it is).
func withSQLComment(ctx context.Context, comment string) context.Context {
	if comment == "" {
		return ctx
	}
	return context.WithValue(ctx, sqlCommentKey{}, comment)
}

func sqlCommentFrom(ctx context.Context) string {
	c, _ := ctx.Value(sqlCommentKey{}).(string)
	return c
}

// annotate appends the session's comment to a statement.
func (sess *Session) annotate(sql string) string {
	if sess.comment == "" {
		return sql
	}
	return sql + " " + sess.comment
}

// sqlComment builds the comment for a request of method route with the
// given traceparent and tracestate, or "" when traceparent is not a valid
// W3C traceparent (OpenTelemetry's propagator decides).
func sqlComment(route, traceparent, tracestate string) string {
	if traceparent == "" {
		return ""
	}
	carrier := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		carrier["tracestate"] = tracestate
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), carrier)
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	out := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, out) // the canonical form of what came in
	var b strings.Builder
	b.WriteString("/*application='")
	b.WriteString(commentValue(sqlApplication))
	if route != "" {
		b.WriteString("',route='")
		b.WriteString(commentValue(route))
	}
	b.WriteString("',traceparent='")
	b.WriteString(commentValue(out["traceparent"]))
	if ts := out["tracestate"]; ts != "" {
		b.WriteString("',tracestate='")
		b.WriteString(commentValue(ts))
	}
	b.WriteString("'*/")
	return b.String()
}

// commentValue URL-encodes v as encodeURIComponent does, then escapes
// single quotes (which it leaves as they are) with a backslash. The
// result never holds "*/", a quote that ends the value, or a byte that is
// not printable ASCII.
func commentValue(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '!', c == '~', c == '*', c == '(', c == ')':
			b.WriteByte(c)
		case c == '\'':
			b.WriteString(`\'`)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// httpSQLComment is the comment for the statements token scoping runs for
// request r, whose whole body is body: the traceparent header, else the
// JSON-RPC request's params._meta.traceparent; the route is its method.
func httpSQLComment(r *http.Request, body []byte) string {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta struct {
				Traceparent string `json:"traceparent"`
				Tracestate  string `json:"tracestate"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg) // a batch or a bad body: no route, no _meta
	tp, ts := r.Header.Get("Traceparent"), r.Header.Get("Tracestate")
	if tp == "" {
		tp, ts = msg.Params.Meta.Traceparent, msg.Params.Meta.Tracestate
	}
	return sqlComment(msg.Method, tp, ts)
}

// sqlCommentMiddleware gives MCP handlers (tools, resources, prompts) the
// comment of their request: go-sdk does not run a stateful session's
// handlers under the HTTP request's context, so the comment token scoping
// saw is read again from the request's params._meta.
func sqlCommentMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// A request without params (notifications/initialized) carries a
		// nil pointer inside the interface: GetMeta on it would panic.
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
			meta := p.GetMeta()
			tp, _ := meta["traceparent"].(string)
			ts, _ := meta["tracestate"].(string)
			if c := sqlComment(method, tp, ts); c != "" {
				ctx = withSQLComment(ctx, c)
			}
		}
		return next(ctx, method, req)
	}
}

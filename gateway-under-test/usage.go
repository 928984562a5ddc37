package gateway

import (
	"context"
	"net/http"
)

// sqlTouchToken records a token's last use, at most once a second per
// token: under load a token is used many times a second, and writing the
// row on every request would only add write load for the same answer.
const sqlTouchToken = `UPDATE api_tokens SET last_used_at = now()
WHERE token_hash = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 second')`

// trackTokenUse wraps the MCP handler, behind token scoping (so only
// accepted tokens get here), with token-usage tracking: every request
// records its token's last use before it is dispatched. Off unless
// Config.TokenUsage is set or the session-outside-request variant (whose
// bug lives here) is enabled; when it is off the handler is next itself.
func (g *Gateway) trackTokenUse(next http.Handler) http.Handler {
	touch := g.touchTokenInRequest
	switch {
	case g.variants[VariantSessionOutsideRequest]:
		touch = g.touchTokenOutsideRequest
	case !g.cfg.TokenUsage:
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token, ok := bearerToken(r); ok {
			touch(r.Context(), HashToken(token))
		}
		next.ServeHTTP(w, r)
	})
}

// touchTokenOutsideRequest is the session-outside-request bug (ContextForge
// #1862, as issue #19 describes it: sessions opened outside a request's
// scope and never closed). A side job — here the token-usage write —
// opens its own session, beside the request-scoped session management,
// rather than running in a unit of work that is closed on every path. Its
// close sits at the end of the happy path, as in
//
//	db = SessionLocal()
//	updated = db.execute(touch_token, ...).rowcount
//	if not updated:
//	    return            # touched less than a second ago: nothing to do
//	db.commit()
//	db.close()
//
// so the early return — taken whenever the token was used in the last
// second, which is every request of a client under load and none of a
// client at human pace — leaves the session open: "idle in transaction",
// its last query the UPDATE, holding a pool slot and a PgBouncer server
// connection until idle_in_transaction_session_timeout kills it (25P03). A
// failed statement or commit (a client that gave up) leaks the same way.
//
// Faithful: the shape — a side-job session opened outside the request's
// session management, closed only on the happy path — and what the probes
// see. Assumed (the code was not available to us): that the side
// job is the token-usage write, its once-a-second guard, and the early
// return as the path that skips the close.
func (g *Gateway) touchTokenOutsideRequest(ctx context.Context, hash string) {
	sess, err := g.store.NewSession(ctx) // its own session, outside the request's
	if err != nil {
		g.log.Debug("token usage not recorded", "err", err)
		return
	}
	defer sess.Detach()
	tag, err := sess.Exec(ctx, sqlTouchToken, hash)
	if err != nil || tag.RowsAffected() == 0 {
		return // BUG (#1862): the session is closed only on the happy path
	}
	if err := sess.Commit(ctx); err != nil {
		return // BUG (#1862): and not when the commit fails either
	}
	sess.Close()
}

// touchTokenInRequest is the fix: the side job runs in a unit of work of
// the request's own session management (withSession), committed and
// closed on every path — ContextForge's later `with fresh_db_session() as
// db:` in its token-usage middleware has this shape.
func (g *Gateway) touchTokenInRequest(ctx context.Context, hash string) {
	err := g.withSession(ctx, func(sess *Session) error {
		_, err := sess.Exec(ctx, sqlTouchToken, hash)
		return err
	})
	if err != nil {
		g.log.Debug("token usage not recorded", "err", err)
	}
}

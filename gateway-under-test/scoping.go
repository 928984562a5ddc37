package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Token-scoping queries. The second is the statement the incident's stuck
// sessions showed as their last query ("SELECT email_team_members…").
const (
	sqlLookupToken = `SELECT t.user_email, u.is_active
FROM api_tokens t JOIN email_users u ON u.email = t.user_email
WHERE t.token_hash = $1 AND t.is_active AND (t.expires_at IS NULL OR t.expires_at > now())`

	// Token scoping counts the request on the caller's row, inside its
	// transaction: a write whose row lock lasts as long as the scoping
	// session. A leaked session keeps it, so the caller's next requests
	// wait on it (the lock cascade the probe measures) — at most
	// scopingLockTimeout, then they fail; a released one holds it for
	// milliseconds. It runs before the membership SELECT, which stays the
	// last statement a leaked session shows (the incident's culprit).
	// Per caller rather than per team: a leak blocks its own user's next
	// requests, not a tenth of everyone's. Two seconds: longer than the
	// probe's lock sampling period (at most once a second), so that every
	// wait is seen, and short against the idle-in-transaction timeouts
	// the profiles set.
	sqlScopingLockTimeout = `SET LOCAL lock_timeout = '2s'`
	sqlCountRequest       = `UPDATE email_users SET request_count = request_count + 1 WHERE email = $1`

	sqlTeamMemberships = `SELECT email_team_members.team_id, email_team_members.role
FROM email_team_members JOIN email_teams ON email_teams.id = email_team_members.team_id
WHERE email_team_members.user_email = $1 AND email_team_members.is_active AND email_teams.is_active`
)

// Scope is what token scoping learned about the caller.
type Scope struct {
	Email string
	Teams []int64
}

type scopeKey struct{}

// cleanupCommitInFinally is the Go twin of ContextForge's token-scoping
// middleware before PR #1886 (issue #1885):
//
//	finally:
//	    db.commit()
//	    db.close()
//
// When the commit raises — here: the request's context was cancelled because
// the client gave up, as asyncio cancels a task when its client disconnects —
// the close is skipped and the session stays "idle in transaction" on the
// server, holding a pool slot, until idle_in_transaction_session_timeout.
func cleanupCommitInFinally(ctx context.Context, sess *Session) error {
	if err := sess.Commit(ctx); err != nil {
		return err // BUG (#1885): sess.Close() never runs on this path
	}
	sess.Close()
	return nil
}

// cleanupFixed is PR #1886's fix: a nested try/finally, so the close (which
// rolls back whatever is open) runs whether or not the commit failed.
//
//	try:
//	    db.commit()
//	finally:
//	    db.close()
func cleanupFixed(ctx context.Context, sess *Session) error {
	defer sess.Close()
	return sess.Commit(ctx)
}

// tokenScoping authenticates the bearer token and reads the caller's team
// memberships — two queries on every HTTP request, as ContextForge's
// middleware did — and hands the result to the MCP layer as go-sdk
// TokenInfo (via auth.RequireBearerToken, which also writes the 401s).
//
// How long the scoping session lives is what the variants change:
//   - fixed: released before the request is dispatched (scopeThenRelease);
//   - commit-in-finally: held for the whole request, ended by the buggy
//     cleanup (scopeAroundRequest);
//   - held-while-waiting: committed, but the connection held for the whole
//     request (scopeHeldForRequest).
func (g *Gateway) tokenScoping(next http.Handler) http.Handler {
	verify := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		sc, _ := r.Context().Value(scopeKey{}).(*Scope)
		if sc == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: sc.Email, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"scope": sc}}, nil
	}, nil)(next)

	scope := g.scopeThenRelease
	switch {
	case g.variants[VariantCommitInFinally], g.variants[VariantCommitInFinallyRare]:
		scope = g.scopeAroundRequest
	case g.variants[VariantHeldWhileWaiting]:
		scope = g.scopeHeldForRequest
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			// RFC 6750 §3: a 401 names the scheme the client should use.
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			verify.ServeHTTP(w, r) // answers 401 without touching the database
			return
		}
		scope(w, r, token, verify)
	})
}

// serveScoped dispatches the request with its scope, or lets verify answer
// 401 when the token was not accepted (sc == nil).
func serveScoped(w http.ResponseWriter, r *http.Request, sc *Scope, verify http.Handler) {
	if sc == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp", error="invalid_token", error_description="unknown, inactive or expired token"`)
	} else {
		r = r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc))
	}
	verify.ServeHTTP(w, r)
}

// scopeThenRelease is the fixed token scoping: authenticate on a
// short-lived session that is committed and closed (nested finally, PR
// #1886) before the request is dispatched, so that nothing a tool does
// afterwards — waiting, polling, calling the upstream — holds it. This is
// also the fix of the held-while-waiting incident: "authenticate on a
// short-lived connection closed before dispatch".
func (g *Gateway) scopeThenRelease(w http.ResponseWriter, r *http.Request, token string, verify http.Handler) {
	sc, err := g.lookupAndRelease(r.Context(), token)
	if err != nil {
		g.dbUnavailable(w, err)
		return
	}
	serveScoped(w, r, sc, verify) // no connection held from here on
}

func (g *Gateway) lookupAndRelease(ctx context.Context, token string) (sc *Scope, err error) {
	sess, err := g.store.NewSession(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Detach()
	defer func() {
		if cerr := cleanupFixed(ctx, sess); cerr != nil && err == nil {
			err = fmt.Errorf("token scoping: end the database session: %w", cerr)
		}
	}()
	sc, err = lookupScope(ctx, sess, token)
	if errors.Is(err, errBadToken) {
		return nil, nil
	}
	return sc, err
}

// scopeAroundRequest is ContextForge's middleware shape: one session per
// HTTP request, opened for token scoping and ended after the rest of the
// request has run, with commit-in-finally's cleanup. A request whose client
// gives up mid-way has its context cancelled, the commit fails, and the
// session leaks idle in transaction, its last query the membership SELECT.
// Any hang-up before the server has finished the request will do — even a
// client that hangs up the instant it has read its answer, as go-sdk's
// client may on SSE answers — so under load it leaks without timeouts too.
// commit-in-finally-rare runs it too, with one request in RareLeakEvery
// cancelled before its cleanup (rareleak.go): the fix, cleanupFixed, closes
// the session whether or not the commit failed.
func (g *Gateway) scopeAroundRequest(w http.ResponseWriter, r *http.Request, token string, verify http.Handler) {
	ctx := r.Context()
	sess, err := g.store.NewSession(ctx)
	if err != nil {
		g.dbUnavailable(w, err)
		return
	}
	defer sess.Detach()
	defer func() {
		// commit-in-finally-rare: one request in RareLeakEvery meets the
		// error that cancels it before its cleanup (rareleak.go).
		cctx := cleanupContext(ctx, g.variants[VariantCommitInFinallyRare] && g.rarePath())
		if err := cleanupCommitInFinally(cctx, sess); err != nil { // BUG (#1885): on a cancelled context sess.Close() never runs
			g.log.Warn("token scoping: ending the database session failed", "err", err, "cause", context.Cause(cctx), "variant", g.variants.String())
		}
	}()
	sc, err := lookupScope(ctx, sess, token)
	if err != nil && !errors.Is(err, errBadToken) {
		g.dbUnavailable(w, err)
		return
	}
	serveScoped(w, r, sc, verify)
}

// scopeHeldForRequest is the held-while-waiting bug, the twin of
// scopeThenRelease: an MCP server (FastAPI) authenticated through a
// request-scoped get_db dependency, so the pooled connection stayed checked
// out until the response was sent — through wait_for_run's whole polling
// loop, up to 30 s. Its connection is in autocommit, so between statements
// the backend is plain "idle": invisible to idle-in-transaction dashboards,
// while concurrent waiters exhaust the pool (acquired = max, acquire waits
// and timeouts climb). The fix (PR #917): scopeThenRelease.
func (g *Gateway) scopeHeldForRequest(w http.ResponseWriter, r *http.Request, token string, verify http.Handler) {
	ctx := r.Context()
	sess, err := g.store.NewAutocommitSession(ctx)
	if err != nil {
		g.dbUnavailable(w, err)
		return
	}
	defer sess.Detach()
	defer sess.Close() // BUG: released only when the whole request is done
	sc, err := lookupScope(ctx, sess, token)
	if err != nil && !errors.Is(err, errBadToken) {
		g.dbUnavailable(w, err)
		return
	}
	serveScoped(w, r, sc, verify)
}

var errBadToken = errors.New("unknown, inactive or expired token")

// lookupScope runs the two token-scoping queries.
func lookupScope(ctx context.Context, sess *Session, token string) (*Scope, error) {
	var sc Scope
	var active bool
	found, err := sess.QueryRow(ctx, sqlLookupToken, []any{HashToken(token)}, &sc.Email, &active)
	if err != nil {
		return nil, fmt.Errorf("look up token: %w", err)
	}
	if !found || !active {
		return nil, errBadToken
	}
	if !sess.autocommit { // SET LOCAL outside a transaction block only warns
		if _, err := sess.Exec(ctx, sqlScopingLockTimeout); err != nil {
			return nil, fmt.Errorf("set the lock timeout: %w", err)
		}
	}
	if _, err := sess.Exec(ctx, sqlCountRequest, sc.Email); err != nil {
		return nil, fmt.Errorf("count the request: %w", err)
	}
	var team int64
	var role string
	err = sess.QueryRows(ctx, sqlTeamMemberships, []any{sc.Email}, []any{&team, &role}, func() error {
		sc.Teams = append(sc.Teams, team)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read team memberships: %w", err)
	}
	return &sc, nil
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// dbUnavailable answers 503 when the database (or the pool) cannot serve
// the request, so clients see a retryable status rather than a hang. The
// answer comes before authentication is done, so it names no detail of the
// database (its user, name, address: pgx puts them in connect errors) —
// only pool exhaustion, which says nothing about it; the log has the rest.
func (g *Gateway) dbUnavailable(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client is gone; nobody reads the answer
	}
	g.log.Warn("database unavailable", "err", err)
	msg := "database unavailable"
	if errors.Is(err, ErrPoolTimeout) {
		msg += ": " + ErrPoolTimeout.Error()
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// HashToken is how bearer tokens are stored in api_tokens: SHA-256, hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

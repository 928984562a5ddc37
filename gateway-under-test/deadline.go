package gateway

import (
	"context"
	"net/http"
)

// requestDeadline bounds each request's work by Config.RequestTimeout, as a
// service's timeout middleware does (FastAPI's asyncio.wait_for around the
// handler, a Go http.TimeoutHandler): when the database link is slow, the
// deadline cancels the request's context mid-way — not the client, the
// service itself. What is still open then is ended by each variant's own
// cleanup: commit-in-finally's COMMIT runs on the expired context, fails
// without reaching the server, and its close never runs (#1885 on a slow
// link); the fixed cleanup closes (rolls back) on a context of its own.
// Zero (the default): no deadline.
func (g *Gateway) requestDeadline(next http.Handler) http.Handler {
	d := g.cfg.RequestTimeout
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

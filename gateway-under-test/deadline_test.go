package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRequestDeadline: with RequestTimeout the handler's context carries
// the deadline (the service's own, not the client's); without, none.
func TestRequestDeadline(t *testing.T) {
	for _, d := range []time.Duration{0, time.Second} {
		var has bool
		var left time.Duration
		g := &Gateway{cfg: Config{RequestTimeout: d}}
		h := g.requestDeadline(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			var dl time.Time
			dl, has = r.Context().Deadline()
			left = time.Until(dl)
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
		if has != (d > 0) || (has && (left <= 0 || left > d)) {
			t.Errorf("RequestTimeout %s: deadline %v, %s left", d, has, left)
		}
	}
}

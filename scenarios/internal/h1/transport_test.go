package h1

import (
	"net"
	"testing"
	"time"
)

// TestAbortedRequestIsNotPooled: a connection closed under its request
// (the SSE drain timer firing as the stream ends) never goes back to the
// pool, where the next request would fail on it.
func TestAbortedRequestIsNotPooled(t *testing.T) {
	for _, aborted := range []bool{false, true} {
		c1, c2 := net.Pipe()
		tr := &Transport{maxIdle: 1}
		w := &Watch{pc: &pconn{c: c1}, stopCtx: func() bool { return true }, timer: time.AfterFunc(time.Hour, func() {})}
		if aborted {
			w.Abort()
		}
		body := &respBody{rc: noBody{}, w: w, t: tr, keep: true, eof: true}
		_ = body.Close()
		if pooled := len(tr.idle) == 1; pooled == aborted {
			t.Errorf("aborted %v: pooled %v", aborted, pooled)
		}
		tr.CloseIdle()
		c2.Close()
	}
}

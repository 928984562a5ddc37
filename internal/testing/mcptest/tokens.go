package mcptest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The client credentials a [TokenServer] accepts.
const (
	TokenClientID     = "cid"
	TokenClientSecret = "csecret"
)

// TokenServer is an OAuth token endpoint (client-credentials grant) on
// 127.0.0.1 handing out tok-1, tok-2, ... (each valid for an hour) and
// counting its fetches and its connections. It is apart from the MCP
// server because the tests of the token sources (scenarios/mcp/bearer)
// and of the session's refresh on a 401 (scenarios/mcp) both need it.
// Any path of its URL is the token endpoint; it accepts only
// [TokenClientID] and [TokenClientSecret], sent as HTTP basic
// credentials.
type TokenServer struct {
	*httptest.Server
	// Fetches counts the tokens handed out.
	Fetches atomic.Int64
	// Conns counts the connections opened.
	Conns atomic.Int64
	// Open counts the connections opened and not closed yet.
	Open  atomic.Int64
	delay time.Duration
}

// StartTokenServer starts a [TokenServer] that answers every token
// request after delay (so that concurrent fetches overlap), and closes
// it when the test ends.
func StartTokenServer(tb testing.TB, delay time.Duration) *TokenServer {
	ts := &TokenServer{delay: delay}
	ts.Server = httptest.NewUnstartedServer(http.HandlerFunc(ts.serve))
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			ts.Conns.Add(1)
			ts.Open.Add(1)
		case http.StateClosed, http.StateHijacked:
			ts.Open.Add(-1)
		}
	}
	ts.Start()
	tb.Cleanup(ts.Close)
	return ts
}

func (ts *TokenServer) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if id, secret, ok := r.BasicAuth(); !ok || id != TokenClientID || secret != TokenClientSecret || r.PostForm.Get("grant_type") != "client_credentials" {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	time.Sleep(ts.delay)
	n := ts.Fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"bearer","expires_in":3600}`, n)
}

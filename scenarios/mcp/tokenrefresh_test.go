package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
)

// oauthConfig is the client-credentials grant of ts's client, a token
// source per user. The token requests' idle connections end when ts
// closes, at the end of the test.
func oauthConfig(ts *mcptest.TokenServer) bearer.OAuthConfig {
	return bearer.OAuthConfig{TokenURL: ts.URL + "/token", ClientID: mcptest.TokenClientID, ClientSecret: mcptest.TokenClientSecret, PerUser: true}
}

// revokingTarget answers every JSON-RPC request with an empty result,
// unless its bearer token was revoked (or all are refused): then 401.
type revokingTarget struct {
	mu       sync.Mutex
	revoked  map[string]bool
	all      bool // refuse every token
	requests atomic.Int64
	refused  atomic.Int64
}

func (rt *revokingTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rt.requests.Add(1)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	rt.mu.Lock()
	refuse := rt.all || rt.revoked[tok]
	rt.mu.Unlock()
	if refuse {
		rt.refused.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "token expired", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, mcptest.IDOf(body))
}

func (rt *revokingTarget) revoke(tok string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.revoked == nil {
		rt.revoked = map[string]bool{}
	}
	rt.revoked[tok] = true
}

// oauthAgainst is a client whose tokens come from a fresh token server
// and whose target answers 401 to revoked tokens (to every token when
// all); all three close when the test ends.
func oauthAgainst(t *testing.T, all bool) (*mcptest.TokenServer, *revokingTarget, bearer.RefreshingTokenSource, *Client) {
	t.Helper()
	ts := mcptest.StartTokenServer(t, 0)
	rt := &revokingTarget{all: all}
	target := httptest.NewServer(rt)
	t.Cleanup(target.Close)
	src := bearer.NewOAuthTokens(oauthConfig(ts))
	c := NewClient(target.URL, ClientOptions{Tokens: src, RequestTimeout: 5 * time.Second})
	t.Cleanup(c.CloseIdleConnections)
	return ts, rt, src, c
}

// TestOAuth401RefreshesOnce: a target answering 401 to a token (expired
// early, revoked) makes the session fetch one new token and send the
// request once more; only a second 401 counts, as kind auth. Users
// sharing a token source fetch one new token between them, not one each.
// A static token has nothing to refresh: its 401 stays an http failure.
func TestOAuth401RefreshesOnce(t *testing.T) {
	t.Run("revoked once", func(t *testing.T) {
		ts, rt, _, c := oauthAgainst(t, false)
		s := c.NewSession("")
		defer s.CloseConn()
		if err := s.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		rt.revoke("tok-1")
		if err := s.Ping(context.Background()); err != nil {
			t.Fatalf("a revoked token: %v (kind %q), want a new token and the ping answered", err, Classify(err))
		}
		if ts.Fetches.Load() != 2 || rt.requests.Load() != 3 || rt.refused.Load() != 1 {
			t.Errorf("%d token fetches, %d requests (%d refused); want 2, 3 (1)", ts.Fetches.Load(), rt.requests.Load(), rt.refused.Load())
		}
	})
	t.Run("always refused", func(t *testing.T) {
		ts, rt, _, c := oauthAgainst(t, true)
		s := c.NewSession("")
		defer s.CloseConn()
		err := s.Ping(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindAuth || e.Status != http.StatusUnauthorized {
			t.Fatalf("401 to a fresh token too: %v (kind %q), want kind %q with status 401", err, Classify(err), KindAuth)
		}
		if ts.Fetches.Load() != 2 || rt.requests.Load() != 2 {
			t.Errorf("%d token fetches, %d requests; want 2 and 2 (one refresh, one retry)", ts.Fetches.Load(), rt.requests.Load())
		}
	})
	t.Run("shared token revoked", func(t *testing.T) {
		ts, rt, src, c := oauthAgainst(t, false)
		if _, err := src.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
		rt.revoke("tok-1")
		const users = 20
		errs := make([]error, users)
		var wg sync.WaitGroup
		for i := range users {
			s := c.NewSession("")
			wg.Go(func() { defer s.CloseConn(); errs[i] = s.Ping(context.Background()) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if n := ts.Fetches.Load(); n != 2 {
			t.Errorf("%d users sharing a revoked token made %d token fetches, want 2 (the first and one refresh)", users, n)
		}
	})
	t.Run("static token", func(t *testing.T) {
		rt := &revokingTarget{all: true}
		target := httptest.NewServer(rt)
		defer target.Close()
		c := NewClient(target.URL, ClientOptions{RequestTimeout: 5 * time.Second})
		defer c.CloseIdleConnections()
		s := c.NewSession("static")
		defer s.CloseConn()
		err := s.Ping(context.Background())
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindHTTP || e.Status != http.StatusUnauthorized || rt.requests.Load() != 1 {
			t.Errorf("401 to a static token: %v after %d requests, want kind %q 401 after 1", err, rt.requests.Load(), KindHTTP)
		}
	})
}

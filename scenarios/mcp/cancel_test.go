package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// giveUps are the ways a user gives up on a request: the scenario's
// abortAfter, the request timeout, the caller's context.
var giveUps = []struct {
	name string
	kind string
	do   func(s *Session) (context.Context, context.CancelFunc)
}{
	{"abortAfter", KindAborted, func(s *Session) (context.Context, context.CancelFunc) {
		s.SetTimeouts(0, 100*time.Millisecond)
		return context.WithCancel(context.Background())
	}},
	{"request timeout", KindTimeout, func(s *Session) (context.Context, context.CancelFunc) {
		s.SetTimeouts(100*time.Millisecond, 0)
		return context.WithCancel(context.Background())
	}},
	{"context cancelled", KindCanceled, func(s *Session) (context.Context, context.CancelFunc) {
		s.SetTimeouts(0, 0)
		return context.WithTimeout(context.Background(), 100*time.Millisecond)
	}},
}

// TestCancelNotice2025: a 2025-era user that gives up on a request sends
// the go-sdk's server exactly one notifications/cancelled, with the
// request's id, a reason and the session's id, and the request fails as
// given up; the session goes on.
func TestCancelNotice2025(t *testing.T) {
	for _, sse := range []bool{false, true} {
		for _, g := range giveUps {
			t.Run(g.name+map[bool]string{false: "/json", true: "/sse"}[sse], func(t *testing.T) {
				srv := mcptest.Start(t, mcptest.Options{SDK: true, SSE: sse})
				c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second})
				defer c.CloseIdleConnections()
				s := c.NewSession("")
				if err := s.Initialize(context.Background()); err != nil {
					t.Fatalf("Initialize: %v", err)
				}
				ctx, cancel := g.do(s)
				err := s.CallTool(ctx, "slow", []byte(`{}`))
				cancel()
				if Classify(err) != g.kind || CancelNoticeOf(err) != NoticeAccepted {
					t.Fatalf("slow call: %v (kind %q, notice %d); want kind %q and a notice accepted", err, Classify(err), CancelNoticeOf(err), g.kind)
				}
				s.SetTimeouts(0, 0)
				if err := s.CallTool(context.Background(), "echo", []byte(`{"text":"after"}`)); err != nil {
					t.Errorf("the session after the notice: %v", err)
				}
				checkOneNotice(t, srv.Requests(), s.ID())
				if err := s.Close(context.Background()); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
	}
}

// checkOneNotice checks that reqs hold exactly one notifications/cancelled,
// naming the slow tools/call's id, with a reason, on session sid.
func checkOneNotice(t *testing.T, reqs []mcptest.Request, sid string) {
	t.Helper()
	var callID json.RawMessage
	var notices []mcptest.Request
	for _, r := range reqs {
		switch {
		case r.RPCMethod == "tools/call" && strings.Contains(string(r.Params), `"slow"`):
			callID = r.ID
		case r.RPCMethod == "notifications/cancelled":
			notices = append(notices, r)
		}
	}
	if len(notices) != 1 {
		t.Fatalf("%d notifications/cancelled received, want 1", len(notices))
	}
	n := notices[0]
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	if err := json.Unmarshal(n.Params, &p); err != nil {
		t.Fatalf("notice params %s: %v", n.Params, err)
	}
	if callID == nil || !bytes.Equal(p.RequestID, callID) || p.Reason == "" || len(n.ID) != 0 {
		t.Errorf("notice %s (id %s) for the call of id %s; want its requestId, a reason and no id of its own", n.Params, n.ID, callID)
	}
	if sid == "" || n.SessionID != sid {
		t.Errorf("notice on session %q, want the user's %q", n.SessionID, sid)
	}
}

// TestCancelNotice2026: in 2026-07-28 closing the response stream is the
// cancellation: a user that gives up sends no notice.
func TestCancelNotice2026(t *testing.T) {
	for _, mode := range mcptest.ModernModes {
		for _, g := range giveUps {
			t.Run(mode.Name+"/"+g.name, func(t *testing.T) {
				srv := mcptest.Start(t, mode.Opts)
				c := NewClient(srv.URL, ClientOptions{RequestTimeout: 5 * time.Second, ProtocolVersion: Version20260728})
				defer c.CloseIdleConnections()
				s := c.NewSession("")
				if err := s.Initialize(context.Background()); err != nil {
					t.Fatalf("Initialize: %v", err)
				}
				ctx, cancel := g.do(s)
				err := s.CallTool(ctx, "slow", []byte(`{}`))
				cancel()
				if Classify(err) != g.kind || CancelNoticeOf(err) != NoNotice {
					t.Fatalf("slow call: %v (notice %d); want kind %q and no notice", err, CancelNoticeOf(err), g.kind)
				}
				if n := srv.Count("notifications/cancelled"); n != 0 {
					t.Errorf("%d notifications/cancelled received, want none", n)
				}
			})
		}
	}
}

// TestCancelNoticeRefused: a server that answers the notice with an error
// is counted as refusing it; the request is still only given up, and the
// session goes on.
func TestCancelNoticeRefused(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	u, err := url.Parse(srv.Server.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
			http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"no such method"}}`, http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	c := NewClient(front.URL+"/mcp", ClientOptions{RequestTimeout: 5 * time.Second})
	defer c.CloseIdleConnections()
	s := c.NewSession("")
	ctx := context.Background()
	if err := s.Initialize(ctx); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	s.SetTimeouts(0, 100*time.Millisecond)
	err = s.CallTool(ctx, "slow", []byte(`{}`))
	if Classify(err) != KindAborted || CancelNoticeOf(err) != NoticeRefused {
		t.Fatalf("slow call: %v (notice %d); want aborted, the notice refused", err, CancelNoticeOf(err))
	}
	s.SetTimeouts(0, 0)
	if err := s.CallTool(ctx, "echo", []byte(`{"text":"after"}`)); err != nil {
		t.Errorf("the session after a refused notice: %v", err)
	}
	_ = s.Close(ctx)
}

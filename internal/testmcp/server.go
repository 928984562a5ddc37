// Package testmcp is a minimal MCP server over Streamable HTTP written by
// hand (JSON-RPC over HTTP, no SDK), for tests: an implementation other
// than leakbench's gateway and the go-sdk, so that the client is held to
// the protocol, not to one server's habits. It answers in JSON or SSE,
// stateful (Mcp-Session-Id) or stateless, may require a bearer token, and
// counts the connections it accepted.
package testmcp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Options choose the server's behaviour.
type Options struct {
	Stateless bool // no Mcp-Session-Id
	SSE       bool // answer requests as text/event-stream
	// Authorized, if set, decides whether a bearer token is accepted
	// (401 otherwise).
	Authorized func(token string) bool
}

// Server is the handler; serve it with Serve or any http.Server.
type Server struct {
	opts     Options
	mu       sync.Mutex
	sessions map[string]bool

	Conns    atomic.Int64 // connections accepted (with ConnState)
	Open     atomic.Int64 // connections open now
	Requests atomic.Int64 // JSON-RPC requests answered
	Closed   atomic.Int64 // sessions ended with DELETE
}

// New returns a server with the options.
func New(opts Options) *Server { return &Server{opts: opts, sessions: map[string]bool{}} }

// ConnState counts connections; set it as http.Server.ConnState.
func (s *Server) ConnState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.Conns.Add(1)
		s.Open.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.Open.Add(-1)
	}
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Authorized != nil {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !s.opts.Authorized(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodDelete:
		if s.opts.Stateless {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		s.mu.Lock()
		known := s.sessions[sid]
		delete(s.sessions, sid)
		s.mu.Unlock()
		if !known {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		s.Closed.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !strings.Contains(r.Header.Get("Accept"), "application/json") {
		http.Error(w, "Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.JSONRPC != "2.0" {
		http.Error(w, "not JSON-RPC 2.0", http.StatusBadRequest)
		return
	}
	if req.Method != "initialize" && !s.opts.Stateless {
		s.mu.Lock()
		known := s.sessions[sid]
		s.mu.Unlock()
		switch {
		case sid == "":
			http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
			return
		case !known:
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result, rpcErr := s.answer(&req)
	if req.Method == "initialize" && !s.opts.Stateless {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		sid = hex.EncodeToString(b)
		s.mu.Lock()
		s.sessions[sid] = true
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != nil {
		resp["error"] = rpcErr
	} else {
		resp["result"] = result
	}
	body, _ := json.Marshal(resp)
	s.Requests.Add(1)
	if s.opts.SSE {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Server) answer(req *request) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		v := "2025-06-18"
		if p.ProtocolVersion == "2025-03-26" || p.ProtocolVersion == "2025-11-25" {
			v = p.ProtocolVersion
		}
		return map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "testmcp", "version": "1"}}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}, nil
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if p.Name != "echo" {
			return nil, &rpcError{Code: -32602, Message: "unknown tool"}
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(p.Arguments["text"])}}}, nil
	case "resources/list":
		return map[string]any{"resources": []any{}}, nil
	case "prompts/list":
		return map[string]any{"prompts": []any{}}, nil
	}
	return nil, &rpcError{Code: -32601, Message: "method not found"}
}

// Serve serves s on ln until the returned server is closed.
func Serve(ln net.Listener, s *Server) *http.Server {
	hs := &http.Server{Handler: s, ConnState: s.ConnState}
	go func() { _ = hs.Serve(ln) }()
	return hs
}

package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The tests speak raw HTTP to the server, as a client would, without any
// MCP client library.

// start serves a server on loopback until the test ends (its streams
// closed first, then the HTTP server).
func start(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	s := Start(t, opts)
	t.Cleanup(func() {
		s.Close()
		if n := s.ListensOpen() + s.GETStreamsOpen(); n != 0 {
			t.Errorf("%d streams still open after Close", n)
		}
	})
	return s, s.URL
}

// message is a JSON-RPC message as the tests read it.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  map[string]any  `json:"params"`
	Result  map[string]any  `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// answer is one HTTP exchange.
type answer struct {
	status int
	header http.Header
	msg    message
	raw    string
}

// post sends body (marshalled) with the headers; the answer's JSON-RPC
// message is decoded from JSON or from the first SSE event.
func post(t *testing.T, url string, headers map[string]string, body any) answer {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	data := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		ev, err := readEvent(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("SSE answer %q: %v", raw, err)
		}
		data = []byte(ev.data)
	}
	if strings.Contains(resp.Header.Get("Content-Type"), "json") || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := json.Unmarshal(data, &a.msg); err != nil {
			t.Fatalf("answer %q: %v", raw, err)
		}
	}
	return a
}

// modernBody builds a 2026-07-28 request: params with the _meta members
// (caps: the clientCapabilities; nil leaves them out).
func modernBody(id any, method string, params map[string]any, caps map[string]any) map[string]any {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "rawtest", "version": "0"}}
	if caps != nil {
		meta["io.modelcontextprotocol/clientCapabilities"] = caps
	}
	p["_meta"] = meta
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p}
}

// modernHeaders are the headers a conforming client sends with it.
func modernHeaders(method string, params map[string]any) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for _, k := range []string{"name", "uri", "taskId"} {
		if v, ok := params[k].(string); ok && nameField(method) == k {
			h["Mcp-Name"] = v
		}
	}
	return h
}

var noCaps = map[string]any{}

// call2026 sends a conforming 2026-07-28 request.
func call2026(t *testing.T, url, method string, params, caps map[string]any) answer {
	t.Helper()
	return post(t, url, modernHeaders(method, params), modernBody(1, method, params, caps))
}

// initialize does the 2025 handshake and returns the session id ("" if
// stateless).
func initialize(t *testing.T, url string) string {
	t.Helper()
	a := post(t, url, nil, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "rawtest", "version": "0"}}})
	if a.status != http.StatusOK || a.msg.Result["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %d %s", a.status, a.raw)
	}
	sid := a.header.Get("Mcp-Session-Id")
	post(t, url, map[string]string{"Mcp-Session-Id": sid}, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return sid
}

// call2025 sends a request in a 2025 session.
func call2025(t *testing.T, url, sid, method string, params map[string]any) answer {
	t.Helper()
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	if sid != "" {
		h["Mcp-Session-Id"] = sid
	}
	body := map[string]any{"jsonrpc": "2.0", "id": 7, "method": method}
	if params != nil {
		body["params"] = params
	}
	return post(t, url, h, body)
}

// wantError checks a JSON-RPC error answer.
func wantError(t *testing.T, a answer, status, code int, msgHas string) {
	t.Helper()
	if a.status != status || a.msg.Error == nil || a.msg.Error.Code != code || !strings.Contains(a.msg.Error.Message, msgHas) {
		t.Fatalf("want HTTP %d error %d (%q), got %d %s", status, code, msgHas, a.status, a.raw)
	}
}

// text is the first text content of a tool result.
func text(t *testing.T, res map[string]any) string {
	t.Helper()
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		t.Fatalf("no content in %v", res)
	}
	s, _ := c[0].(map[string]any)["text"].(string)
	return s
}

// sseEvent is one event of an SSE stream.
type sseEvent struct{ id, event, data, retry string }

// readEvent reads up to the blank line that ends an event (comments and
// events with nothing but a retry field are returned as they are).
func readEvent(br *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if seen && err == io.EOF {
				return ev, nil
			}
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return ev, nil
			}
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			ev.data += value
		case "retry":
			ev.retry = value
		}
	}
}

// stream opens a long-lived SSE answer (a GET, or a POST of body); the
// caller reads it and closes the body (or cancels ctx).
func stream(t *testing.T, ctx context.Context, method, url string, headers map[string]string, body any) (*http.Response, *bufio.Reader) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, rd)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

// eventually waits up to 2s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func decode(t *testing.T, data string) message {
	t.Helper()
	var m message
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data %q: %v", data, err)
	}
	return m
}

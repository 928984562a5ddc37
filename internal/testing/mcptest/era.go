package mcptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The 2026-07-28 era (SEP-2575, SEP-2243): no handshake and no session;
// every request names its version and the client's capabilities in
// params._meta, and mirrors its method (and the tool, prompt, resource or
// task it is about) into the Mcp-Method and Mcp-Name headers, which the
// server checks against the body.

const (
	version2026    = "2026-07-28"
	methodDiscover = "server/discover"

	metaVersion        = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities   = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo     = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	extTasks           = "io.modelcontextprotocol/tasks"
)

// supportedVersions is what server/discover and UnsupportedProtocolVersion
// list: the 2025 ones through the handshake, 2026-07-28 per request.
var supportedVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25", version2026}

// JSON-RPC error codes.
const (
	codeInvalidParams       = -32602
	codeMethodNotFound      = -32601
	codeInternal            = -32603
	codeHeaderMismatch      = -32020
	codeMissingCapabilities = -32021
	codeUnsupportedVersion  = -32022
)

// httpStatus is the status a 2026 error goes with: 400 for the errors of
// the revision's own validation, 404 for an unknown method (so that a
// client tells it from a legacy server's plain 404 by the body), else 200
// with the error in the body, as in the 2025 era.
func (e *rpcError) httpStatus() int {
	switch {
	case e.status != 0:
		return e.status
	case e.Code == codeHeaderMismatch || e.Code == codeMissingCapabilities || e.Code == codeUnsupportedVersion:
		return http.StatusBadRequest
	case e.Code == codeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// call is one request being answered, with what its era told about it.
type call struct {
	req    *request
	ctx    context.Context
	modern bool       // a 2026-07-28 request
	caps   clientCaps // its _meta clientCapabilities (2026 only)
}

type clientCaps struct {
	Elicitation json.RawMessage            `json:"elicitation"`
	Extensions  map[string]json.RawMessage `json:"extensions"`
}

func declared(v json.RawMessage) bool { return len(v) > 0 && !bytes.Equal(v, []byte("null")) }

func (c clientCaps) elicitation() bool { return declared(c.Elicitation) }
func (c clientCaps) tasks() bool       { return declared(c.Extensions[extTasks]) }

// requestMeta is what a request's params._meta says of its era.
type requestMeta struct {
	Version      *string         `json:"io.modelcontextprotocol/protocolVersion"`
	Capabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

func parseMeta(params json.RawMessage) (requestMeta, error) {
	var p struct {
		Meta requestMeta `json:"_meta"`
	}
	if len(params) == 0 {
		return p.Meta, nil
	}
	err := json.Unmarshal(params, &p)
	return p.Meta, err
}

// isModern reports whether a request is of the 2026-07-28 era: its _meta
// names a protocol version (which modern checks), or its
// MCP-Protocol-Version header says 2026-07-28 (then the _meta it lacks is
// the error). Everything else is the 2025 era.
func isModern(r *http.Request, req *request) bool {
	m, _ := parseMeta(req.Params)
	return m.Version != nil || r.Header.Get("Mcp-Protocol-Version") == version2026
}

// modern answers a 2026-07-28 request: no session is required, read or
// minted (an Mcp-Session-Id header is ignored).
func (s *handWritten) modern(w http.ResponseWriter, r *http.Request, req *request) {
	if len(req.ID) == 0 {
		// The revision defines no client notifications over HTTP, nor
		// headers for them: accept them.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	c, rpcErr := s.validate(r, req)
	if rpcErr != nil {
		s.reply(w, req.ID, nil, rpcErr, true)
		return
	}
	c.ctx = r.Context()
	switch req.Method {
	case "initialize", "ping", "logging/setLevel":
		// Gone in 2026-07-28 (the handshake; SEP-2577; the per-request
		// logLevel replaces setLevel).
		s.reply(w, req.ID, nil, &rpcError{Code: codeMethodNotFound, Message: "method not found: " + req.Method + " does not exist in " + version2026}, true)
	case "subscriptions/listen":
		s.listen(w, r, c)
	default:
		result, rpcErr := s.answer(c)
		s.reply(w, req.ID, result, rpcErr, true)
	}
}

// validate checks what every 2026 request must carry: a version the
// server speaks, the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers
// matching the body, and the client's capabilities.
func (s *handWritten) validate(r *http.Request, req *request) (*call, *rpcError) {
	m, err := parseMeta(req.Params)
	if err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "malformed params: " + err.Error(), status: http.StatusBadRequest}
	}
	if m.Version == nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "MCP-Protocol-Version is " + version2026 + " but params._meta has no " + metaVersion, status: http.StatusBadRequest}
	}
	if *m.Version != version2026 {
		return nil, &rpcError{Code: codeUnsupportedVersion, Message: "Unsupported protocol version",
			Data: map[string]any{"supported": supportedVersions, "requested": *m.Version}}
	}
	if h := r.Header.Get("Mcp-Protocol-Version"); h != *m.Version {
		return nil, mismatch("MCP-Protocol-Version", h, *m.Version)
	}
	if h := r.Header.Get("Mcp-Method"); h != req.Method {
		return nil, mismatch("Mcp-Method", h, req.Method)
	}
	if field := nameField(req.Method); field != "" {
		var p map[string]json.RawMessage
		_ = json.Unmarshal(req.Params, &p)
		var want string
		_ = json.Unmarshal(p[field], &want)
		got, ok := decodeHeaderValue(r.Header.Get("Mcp-Name"))
		if !ok {
			return nil, &rpcError{Code: codeHeaderMismatch, Message: fmt.Sprintf("Header mismatch: Mcp-Name header value %q is malformed base64", r.Header.Get("Mcp-Name"))}
		}
		if r.Header.Get("Mcp-Name") == "" || got != want {
			return nil, mismatch("Mcp-Name", got, want)
		}
	}
	// The spec (basic/index, per-request fields): a request missing a
	// required _meta field is malformed, -32602 with 400.
	if !declared(m.Capabilities) {
		return nil, &rpcError{Code: codeInvalidParams, Message: "params._meta has no " + metaCapabilities + " (required on every " + version2026 + " request)", status: http.StatusBadRequest}
	}
	c := &call{req: req, modern: true}
	if err := json.Unmarshal(m.Capabilities, &c.caps); err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: metaCapabilities + " is not an object: " + err.Error(), status: http.StatusBadRequest}
	}
	return c, nil
}

// nameField is the params member Mcp-Name mirrors for method (SEP-2243;
// the Tasks extension adds taskId), "" if none.
func nameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

func mismatch(header, got, want string) *rpcError {
	return &rpcError{Code: codeHeaderMismatch, Message: fmt.Sprintf("Header mismatch: %s header value %q does not match body value %q", header, got, want)}
}

// decodeHeaderValue undoes SEP-2243's value encoding: =?base64?…?= is the
// base64 of the UTF-8 value; anything else is the value as it is.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	return string(b), err == nil
}

var serverInfo = map[string]any{"name": "mcptest", "version": "1"}

// modernResult adds what every 2026 result carries: its resultType
// (complete unless the method said otherwise) and the server's identity
// in _meta.
func modernResult(result map[string]any) {
	if _, ok := result["resultType"]; !ok {
		result["resultType"] = "complete"
	}
	meta, _ := result["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		result["_meta"] = meta
	}
	meta[metaServerInfo] = serverInfo
}

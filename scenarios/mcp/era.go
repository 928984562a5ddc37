package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// MCP 2026-07-28 (SEP-2575, SEP-2243): the sessionless revision. There is
// no initialize handshake and no Mcp-Session-Id; every request says in its
// params._meta which version it speaks and what the client can do, and
// mirrors its method (and the tool, prompt or resource it is about) into
// the Mcp-Method and Mcp-Name headers, so that gateways can route without
// reading the body. server/discover tells what a server offers. Servers
// serve both eras on one endpoint, deciding per request.
//
// The _meta members are the same for every request of a client, so they
// are built once (Client.meta) and copied into each request: a 2026-07-28
// request costs the client what a 2025 one does, plus those bytes.

// Protocol settings beyond the 2025 versions ([SupportedVersions]).
const (
	// VersionAuto discovers the server's era: server/discover, then
	// 2026-07-28 when the server offers it, else the 2025 handshake.
	VersionAuto = "auto"
	// Version20260728 is the sessionless revision of 28 July 2026.
	Version20260728 = "2026-07-28"
)

// ValidVersionSetting reports whether v is a protocol setting the client
// takes (ClientOptions.ProtocolVersion, [Session.Pin]): "" (negotiate the
// 2025 handshake), [VersionAuto], [Version20260728], or one of
// [SupportedVersions].
func ValidVersionSetting(v string) bool {
	return v == "" || v == VersionAuto || v == Version20260728 || acceptedVersions[v]
}

// Era is the generation of the protocol a session speaks.
type Era string

// The eras.
const (
	// EraNone: the session has not been initialized (or was closed).
	EraNone Era = ""
	// Era2025: the initialize handshake and Mcp-Session-Id (protocol
	// 2025-03-26 to 2025-11-25).
	Era2025 Era = "2025"
	// Era2026: per-request _meta, the standard headers, no session
	// (protocol 2026-07-28).
	Era2026 Era = "2026"
)

// The method 2026-07-28 adds; it is also the Op of its errors.
const methodDiscover = "server/discover"

// JSON-RPC error codes a 2026-07-28 server answers with.
const (
	codeHeaderMismatch      = -32020
	codeMissingCapabilities = -32021
	codeUnsupportedVersion  = -32022
)

// modernMeta builds the _meta members every 2026-07-28 request carries:
// the version, the client's capabilities and its name and version. A
// load-test user declares no capability by default (it answers no
// server requests); caps are the capabilities of a request that does
// (capsInputs, capsTasks; see metaFor).
func modernMeta(info clientInfo, caps string) []byte {
	m := make([]byte, 0, 160+len(caps))
	m = append(m, `"io.modelcontextprotocol/protocolVersion":"`+Version20260728+`","io.modelcontextprotocol/clientCapabilities":{`...)
	m = append(m, caps...)
	m = append(m, `},"io.modelcontextprotocol/clientInfo":{"name":`...)
	m = textutil.AppendJSONString(m, info.Name)
	m = append(m, `,"version":`...)
	m = textutil.AppendJSONString(m, info.Version)
	return append(m, '}')
}

// Capabilities a request declares when its step can use them: answers to
// a server's input requests (the step has inputs:, MRTR), and the Tasks
// extension (the step runs its tools/call as a task). A server must not
// ask for what a request does not declare.
const (
	capsInputs = `"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}`
	capsTasks  = `"extensions":{"` + extensionTasks + `":{}}`
)

// extensionTasks names the Tasks extension (SEP-2663).
const extensionTasks = "io.modelcontextprotocol/tasks"

// buildMetas builds the four _meta variants a client's requests carry:
// index 0 declares nothing, bit 1 the input capabilities, bit 2 Tasks.
func buildMetas(info clientInfo) [4][]byte {
	var m [4][]byte
	for i := range m {
		var caps []string
		if i&metaInputs != 0 {
			caps = append(caps, capsInputs)
		}
		if i&metaTasks != 0 {
			caps = append(caps, capsTasks)
		}
		m[i] = modernMeta(info, strings.Join(caps, ","))
	}
	return m
}

// Bits of a _meta variant (buildMetas).
const (
	metaInputs = 1 << iota
	metaTasks
)

// appendStandardHeaders appends, for a 2026-07-28 request, its Mcp-Method
// and (for tools/call, prompts/get and resources/read) Mcp-Name header
// lines.
func (s *Session) appendStandardHeaders(h []byte) []byte {
	if s.rpcMethod == "" {
		return h
	}
	h = append(h, "Mcp-Method: "...)
	h = append(h, s.rpcMethod...) // one of our own method constants
	h = append(h, "\r\n"...)
	if s.name != "" {
		h = append(h, "Mcp-Name: "...)
		h = appendHeaderValue(h, s.name)
		h = append(h, "\r\n"...)
	}
	return h
}

// The Base64 sentinel of SEP-2243's value encoding.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// appendHeaderValue appends v as SEP-2243 encodes a header value: as it
// is when it is plain visible ASCII, else (non-ASCII, control characters,
// a line break that would inject a header, surrounding blanks, or a value
// that looks like the sentinel itself) =?base64?…?=.
func appendHeaderValue(h []byte, v string) []byte {
	plain := v[0] != ' ' && v[0] != '\t' && v[len(v)-1] != ' ' && v[len(v)-1] != '\t' &&
		!(strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix))
	for i := 0; plain && i < len(v); i++ {
		plain = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if plain {
		return append(h, v...)
	}
	h = append(h, base64Prefix...)
	h = base64.StdEncoding.AppendEncode(h, []byte(v))
	return append(h, base64Suffix...)
}

// Discover sends server/discover, as a step: the 2026-07-28 request (with
// its _meta and headers, without the session id) whatever era the session
// speaks, and checks that the answer lists supportedVersions and
// capabilities. It does not change the session's era.
func (s *Session) Discover(ctx context.Context) error {
	_, err := s.discover(ctx)
	return err
}

// discovery is what a server/discover answer said.
type discovery struct {
	versions  []string
	sessionID string // an Mcp-Session-Id the answer carried
}

// discover sends server/discover and checks its result.
func (s *Session) discover(ctx context.Context) (discovery, error) {
	const op = methodDiscover
	id, version, meta := s.id, s.version, s.meta
	s.id, s.version, s.meta = "", Version20260728, s.c.meta[0]
	defer func() { s.id, s.version, s.meta = id, version, meta }()
	var raw json.RawMessage
	sid, err := s.call(ctx, op, "", nil, &raw)
	if err != nil {
		return discovery{}, err
	}
	d := discovery{sessionID: sid}
	var res struct {
		SupportedVersions *[]string       `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
	}
	var problem string
	switch err := json.Unmarshal(raw, &res); {
	case err != nil:
		problem = "malformed result: " + jsonErrMsg(err)
	case res.SupportedVersions == nil || len(*res.SupportedVersions) == 0:
		problem = "the result lists no supportedVersions"
	case !isObject(res.Capabilities):
		problem = "the result has no capabilities object"
	default:
		d.versions = *res.SupportedVersions
		return d, nil
	}
	return d, &Error{Kind: KindProtocol, Op: op, Msg: s.redact(problem + "; the server answered " + snippet(raw))}
}

// discoverEra starts a 2026-07-28 session with server/discover, and
// reports whether it did. With auto, an answer that shows a legacy
// server (see legacyAnswer), or a result that does not offer 2026-07-28,
// reports false with no error: the caller then does the handshake.
func (s *Session) discoverEra(ctx context.Context, auto bool) (bool, error) {
	const op = methodDiscover
	d, err := s.discover(ctx)
	switch {
	case err != nil && auto && legacyAnswer(err):
		return false, nil
	case err != nil:
		return false, err
	case !slices.Contains(d.versions, Version20260728):
		if auto {
			return false, nil
		}
		return false, &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf("the server does not offer %s (supportedVersions %s)",
			Version20260728, textutil.Truncate(strings.Join(d.versions, ", "), 120)))}
	case d.sessionID != "":
		return false, s.sessionDemanded(op, d.sessionID)
	}
	s.version, s.era, s.meta = Version20260728, Era2026, s.c.meta[0]
	return true, nil
}

// legacyAnswer reports whether err, the failure of a server/discover,
// shows a server of the handshake era, to which the auto setting falls
// back (the Streamable HTTP spec's backward compatibility): a JSON-RPC
// error, or a 400, 404 or 405, other than the errors only a 2026-07-28
// server gives (a header mismatch or missing capabilities: something for
// the client to fix, not a reason to change eras). An unsupported
// protocol version is a modern server that does not speak 2026-07-28:
// the handshake may still find a version both speak.
func legacyAnswer(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch {
	case e.Code == codeHeaderMismatch || e.Code == codeMissingCapabilities:
		return false
	case e.Kind == KindJSONRPC:
		return true
	case e.Kind == KindHTTP:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed
	}
	return false
}

// Result types a 2026-07-28 result may declare (resultType; absent means
// complete).
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
	resultTask          = "task" // the Tasks extension's CreateTaskResult
)

// modernAnswer checks what a 2026-07-28 answer must not carry: a session
// id (the revision has none) once the era is settled, and a resultType
// other than complete unless the request can take it (s.accept:
// input_required when the step has inputs, task when it runs as a task).
// It returns the result type: "" for complete.
func (s *Session) modernAnswer(op string, result []byte, sessionID string) (string, error) {
	if sessionID != "" && s.era == Era2026 {
		return "", s.sessionDemanded(op, sessionID)
	}
	// Decode only if the key may be there, as unmarshalResult does.
	if lacksKey(result, `"resulttype"`) {
		return "", nil
	}
	var rt struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(result, &rt) != nil || rt.ResultType == nil || *rt.ResultType == resultComplete {
		return "", nil // not an object: the caller's decoding says so
	}
	var what string
	switch t := *rt.ResultType; {
	case t == resultInputRequired && s.accept&acceptInputs != 0, t == resultTask && s.accept&acceptTask != 0:
		return t, nil
	case t == resultTask && op == MethodTasksGet:
		// SEP-2663 says "complete", but its own examples answer
		// tasks/get with "task": the task is the result either way.
		return "", nil
	case t == resultInputRequired && inputCapable(op):
		what = "the server asks for input (resultType input_required), which the step does not answer: give it inputs:"
	case t == resultInputRequired:
		what = "the server asks for input (resultType input_required) on " + op + ", which the protocol allows only on tools/call, prompts/get and resources/read"
	case t == resultTask && s.accept&acceptTask == 0 && op == methodCallTool:
		what = "the server answered with a task (resultType task) to a request that did not declare the Tasks extension"
	case t == resultTask:
		what = "the server answered " + op + " with a task (resultType task), which only tools/call may be"
	default:
		what = fmt.Sprintf("unknown resultType %q", textutil.Truncate(t, 32))
	}
	return "", &Error{Kind: KindProtocol, Op: op, Msg: s.redact(what + "; the server answered " + snippet(result))}
}

// inputCapable reports whether the protocol lets a server answer op with
// input_required.
func inputCapable(op string) bool {
	return op == methodCallTool || op == methodGetPrompt || op == methodReadResource
}

// sessionDemanded is the error for a server that offered 2026-07-28 and
// then assigned a session.
func (s *Session) sessionDemanded(op, sessionID string) error {
	return &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf(
		"the server offered %s, which has no sessions, but assigned one (Mcp-Session-Id %q)", Version20260728, textutil.Truncate(sessionID, 64)))}
}

// sessionHint prefixes msg, the server's own words on a request it
// refused, with what went wrong when a 2026-07-28 request was refused for
// want of a session or of the handshake: a server that offered the
// sessionless revision and then demands a session.
func (s *Session) sessionHint(msg string) string {
	if s.meta == nil {
		return msg
	}
	if low := strings.ToLower(msg); strings.Contains(low, "session") || strings.Contains(low, "initializ") {
		return "the request spoke " + Version20260728 + ", which has no sessions, but the server demands one: " + msg
	}
	return msg
}

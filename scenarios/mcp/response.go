package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/tidwall/gjson"
)

// MaxBodyBytes bounds how much of one answer the client reads (and one
// event of a notification stream), so that a hostile or broken target
// cannot make it run out of memory: past it the request fails with
// KindTooLarge.
const MaxBodyBytes = 4 << 20

// MaxLineBytes bounds one line of an event stream (an SSE answer, a
// notification stream, which has no end and so no body bound): past it
// the stream fails with KindTooLarge. A data line may carry a whole
// answer, hence the same bound as a body.
const MaxLineBytes = MaxBodyBytes

const (
	mediaJSON = "application/json"
	mediaSSE  = "text/event-stream"
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// rpcResponse is the answer to one of our requests: exactly one of Result and
// Error is set.
type rpcResponse struct {
	Result json.RawMessage
	Error  *rpcError
}

// rpcMessage is any JSON-RPC 2.0 message, as far as we need to look into it.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// parseResponse reads, from an answer body of the given media type
// (lower-case, without parameters), the JSON-RPC response to request id.
//
// An application/json body must hold that one response (or a batch
// containing it). A text/event-stream body is read event by event until the
// event carrying it; other events, server requests and notifications are
// skipped. Format errors are *protocolError; I/O errors are returned as they
// come, so the caller can tell a dropped connection from a malformed answer.
func parseResponse(mediaType string, body io.Reader, id int64) (rpcResponse, error) {
	switch mediaType {
	case mediaJSON:
		buf := bodyBufs.Get().(*bodyBuf)
		defer putBodyBuf(buf)
		buf.Reset()
		buf.lr = limitedReader{r: body, n: MaxBodyBytes, limit: MaxBodyBytes}
		_, err := buf.ReadFrom(&buf.lr)
		buf.lr.r = nil
		if err != nil {
			return rpcResponse{}, err
		}
		// decodeMessage copies what it returns: buf can be reused.
		resp, ok, err := decodeMessage(buf.Bytes(), id, true, &buf.msg)
		if err != nil {
			return rpcResponse{}, err
		}
		if !ok {
			return rpcResponse{}, protocolErrorf("JSON body holds no response to request %d", id)
		}
		return resp, nil
	case mediaSSE:
		return parseSSE(&limitedReader{r: body, n: MaxBodyBytes, limit: MaxBodyBytes}, id)
	default:
		return rpcResponse{}, protocolErrorf("unexpected Content-Type %q", textutil.Truncate(mediaType, 64))
	}
}

// bodyBuf is a buffer a JSON answer is read into, with the reader that
// bounds it: kept together so that neither is allocated per answer.
type bodyBuf struct {
	bytes.Buffer
	lr  limitedReader
	msg rpcMessage // decodeMessage's scratch
}

// bodyBufs recycles them.
var bodyBufs = sync.Pool{New: func() any { return new(bodyBuf) }}

func putBodyBuf(b *bodyBuf) {
	if b.Cap() <= 64<<10 { // do not keep the odd huge answer alive
		bodyBufs.Put(b)
	}
}

// limitedReader is io.LimitReader that fails loudly instead of hitting
// EOF: once more than limit bytes came (n, the bytes left, is limit at
// first), Read returns a *tooLargeError.
type limitedReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, &tooLargeError{what: "answer body", limit: l.limit}
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// decodeMessage decodes one JSON-RPC message (or batch) and reports whether it
// is the response to request id. In strict mode (a JSON body, which must be
// our response) anything else is a protocol error; otherwise (an SSE event)
// requests, notifications and responses to other ids are skipped.
//
// m is scratch space for the message (its fields are overwritten); what
// is returned does not point into it.
func decodeMessage(data []byte, id int64, strict bool, m *rpcMessage) (rpcResponse, bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return rpcResponse{}, false, protocolErrorf("empty JSON-RPC message")
	}
	if data[0] == '[' {
		var batch []rpcMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			return rpcResponse{}, false, protocolErrorf("malformed JSON-RPC batch: %v", jsonErrMsg(err))
		}
		for i := range batch {
			resp, ok, err := matchMessage(&batch[i], id, false)
			if err != nil || ok {
				return resp, ok, err
			}
		}
		if strict {
			return rpcResponse{}, false, protocolErrorf("JSON-RPC batch holds no response to request %d", id)
		}
		return rpcResponse{}, false, nil
	}
	*m = rpcMessage{}
	if !scanMessage(data, m) {
		// Anything the fast path does not take as it is: encoding/json,
		// whose errors say what is wrong.
		*m = rpcMessage{}
		if err := json.Unmarshal(data, m); err != nil {
			return rpcResponse{}, false, protocolErrorf("malformed JSON-RPC message: %v", jsonErrMsg(err))
		}
	}
	return matchMessage(m, id, strict)
}

// scanMessage reads a well-formed JSON-RPC message object into m the way
// encoding/json would, in one pass over its top-level members with gjson
// (no reflection; the request path's largest cost after the syscalls),
// and reports false for anything it does not take as it is — not valid
// JSON, not an object, a member of an unexpected type — which the caller
// hands to encoding/json. Member names are matched exactly, as JSON-RPC
// spells them. The error object, rare, is decoded by encoding/json.
func scanMessage(data []byte, m *rpcMessage) bool {
	if !gjson.ValidBytes(data) {
		return false
	}
	// A string over data, not a copy of it: every value kept is copied
	// out below ([]byte(...), strings.Clone) before data's buffer is
	// reused for the next answer (the id, read at once, is not kept).
	root := gjson.Parse(unsafe.String(unsafe.SliceData(data), len(data)))
	if !root.IsObject() {
		return false
	}
	ok := true
	str := func(v gjson.Result) string {
		switch v.Type {
		case gjson.String:
			if v.Str == "2.0" {
				return "2.0" // the usual jsonrpc member: no copy needed
			}
			return strings.Clone(v.Str)
		case gjson.Null:
			return ""
		}
		ok = false
		return ""
	}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "jsonrpc":
			m.JSONRPC = str(v)
		case "method":
			m.Method = str(v)
		case "id":
			// Over data, not a copy: matchMessage reads the id before
			// data's buffer is reused, and nothing keeps it.
			if v.Raw != "" {
				m.ID = unsafe.Slice(unsafe.StringData(v.Raw), len(v.Raw))
			}
		case "result":
			m.Result = json.RawMessage(v.Raw) // a copy: the body's buffer is reused
		case "error":
			m.Error = nil
			if v.Type != gjson.Null {
				var e rpcError
				if !v.IsObject() || json.Unmarshal([]byte(v.Raw), &e) != nil {
					ok = false
				}
				m.Error = &e
			}
		}
		return ok
	})
	return ok
}

func matchMessage(m *rpcMessage, id int64, strict bool) (rpcResponse, bool, error) {
	if m.JSONRPC != "2.0" {
		return rpcResponse{}, false, protocolErrorf("jsonrpc member is %q, want \"2.0\"", textutil.Truncate(m.JSONRPC, 32))
	}
	if m.Method != "" {
		if strict {
			return rpcResponse{}, false, protocolErrorf("expected a response, got a %q message", textutil.Truncate(m.Method, 64))
		}
		return rpcResponse{}, false, nil // a server request or notification
	}
	hasResult, hasError := len(m.Result) > 0, m.Error != nil
	if hasResult == hasError {
		return rpcResponse{}, false, protocolErrorf("JSON-RPC response must have exactly one of result and error")
	}
	idRaw := bytes.TrimSpace(m.ID)
	switch {
	case hasError && (len(idRaw) == 0 || string(idRaw) == "null"):
		// The server could not read our request's id; the error is ours.
	case len(idRaw) == 0:
		return rpcResponse{}, false, protocolErrorf("JSON-RPC response without id")
	default:
		got, err := strconv.ParseInt(string(idRaw), 10, 64)
		if err != nil || got != id {
			if strict {
				return rpcResponse{}, false, protocolErrorf("response id %s does not match request id %d", textutil.Truncate(string(idRaw), 32), id)
			}
			return rpcResponse{}, false, nil
		}
	}
	return rpcResponse{Result: m.Result, Error: m.Error}, true, nil
}

// parseSSE reads a text/event-stream (WHATWG HTML §9.2.6) until the event
// carrying the response to request id.
func parseSSE(r io.Reader, id int64) (rpcResponse, error) {
	br := bufio.NewReaderSize(r, 4096)
	var (
		scratch []byte // long lines
		data    []byte // the data buffer of the event being read
		hasData bool
		event   []byte
		first   = true
		msg     rpcMessage // decodeMessage's scratch
	)
	dispatch := func() (rpcResponse, bool, error) {
		defer func() { data, hasData, event = data[:0], false, event[:0] }()
		if !hasData || (len(event) > 0 && string(event) != "message") {
			return rpcResponse{}, false, nil
		}
		return decodeMessage(data, id, false, &msg)
	}
	field := func(line []byte) {
		if len(line) == 0 || line[0] == ':' {
			return // blank lines are handled by the caller; ':' starts a comment
		}
		name, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			event = append(event[:0], value...)
		}
		// "id", "retry" and unknown fields do not matter here.
	}
	for {
		chunk, err := readLine(br, &scratch, MaxLineBytes)
		if first {
			chunk = bytes.TrimPrefix(chunk, []byte("\xef\xbb\xbf"))
			first = false
		}
		eof := false
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return rpcResponse{}, err
			}
			eof = true
		}
		// chunk ends at '\n' (or EOF); a lone '\r' also ends a line.
		chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
		chunk = bytes.TrimSuffix(chunk, []byte{'\r'})
		for {
			line, rest, more := bytes.Cut(chunk, []byte{'\r'})
			if len(line) == 0 && !(eof && !more) {
				resp, ok, err := dispatch()
				if err != nil || ok {
					return resp, err
				}
			} else {
				field(line)
			}
			if !more {
				break
			}
			chunk = rest
		}
		if eof {
			// The spec drops an event not ended by a blank line; we are
			// lenient and still look at it.
			resp, ok, err := dispatch()
			if err != nil || ok {
				return resp, err
			}
			return rpcResponse{}, protocolErrorf("event stream ended without a response to request %d", id)
		}
	}
}

// readLine returns the bytes up to and including the next '\n' (or up to
// EOF). The slice is valid until the next call. A line longer than max
// bytes (its "\r\n" or "\n" not counted) is a *tooLargeError, and
// reading stops a buffer past max: a server that never ends its line
// cannot make the client hold more.
func readLine(br *bufio.Reader, scratch *[]byte, max int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append((*scratch)[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= max {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		*scratch = buf
		line = buf
	}
	if lineLen(line) > max {
		return nil, &tooLargeError{what: "event stream line", limit: int64(max)}
	}
	return line, err
}

// lineLen is the length of line without its "\n" or "\r\n".
func lineLen(line []byte) int {
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	return n
}

// jsonErrMsg shortens a JSON decoding error.
func jsonErrMsg(err error) string { return textutil.Truncate(err.Error(), 120) }

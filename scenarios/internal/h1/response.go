// A strict reader of HTTP/1.x response heads, keeping only what an MCP
// client needs (status, Content-Type, Mcp-Session-Id, framing). It replaces
// http.ReadResponse on the hot path, whose header map and strings were the
// engine's largest allocation per request. FuzzReadResponse holds it to
// net/http: what it accepts, net/http reads the same way.

package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// maxHeadBytes bounds a response head.
const maxHeadBytes = 64 << 10

// Response is an HTTP response as the client sees it.
type Response struct {
	StatusCode  int
	ContentType string
	SessionID   string // Mcp-Session-Id
	Body        io.ReadCloser

	length int64 // Content-Length; -1 when not given
	close  bool  // the connection cannot be reused after this response
}

var errMalformedHead = errors.New("malformed HTTP response head")

// readResponse reads the next final response (informational ones are
// skipped); its Body reads the body as framed, and reports io.EOF at its end.
func readResponse(br *bufio.Reader, method string) (*Response, error) {
	r := new(Response)
	return r, readResponseInto(br, method, r, new(lengthBody), nil)
}

// readResponseInto is readResponse into r, with lb for a Content-Length
// body: a connection's own, reused from one request to the next. sid is
// the last session id read (nil: none kept): while the server repeats
// it, its string is reused rather than allocated again.
func readResponseInto(br *bufio.Reader, method string, r *Response, lb *lengthBody, sid *string) error {
	for {
		if err := readHead(br, r, sid); err != nil {
			return err
		}
		if r.StatusCode >= 200 {
			r.Body = bodyReader(br, r, method, lb)
			return nil
		}
		// 1xx: no body; the final answer follows.
	}
}

// readHead reads one response head into r, which it resets first.
func readHead(br *bufio.Reader, r *Response, sid *string) error {
	*r = Response{length: -1}
	budget := maxHeadBytes
	line, err := headLine(br, &budget)
	if err != nil {
		return err
	}
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("%w: status line %q", errMalformedHead, textutil.Truncate(string(line), 40))
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: status line %q", errMalformedHead, textutil.Truncate(string(line), 40))
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return fmt.Errorf("%w: status %d", errMalformedHead, code)
	}
	http10 := line[7] == '0'
	r.StatusCode = code
	chunked, closeTok, keepAlive := false, false, false
	for {
		line, err := headLine(br, &budget)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return fmt.Errorf("%w: header line %q", errMalformedHead, textutil.Truncate(string(line), 40))
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if hasCTL(value) {
			return fmt.Errorf("%w: control character in a header value", errMalformedHead)
		}
		switch {
		case textutil.ASCIIEqualFold(name, "content-type"):
			r.ContentType = contentType(value)
		case textutil.ASCIIEqualFold(name, "mcp-session-id"):
			if sid != nil && string(value) == *sid { // compared without a copy
				r.SessionID = *sid
			} else {
				r.SessionID = string(value)
				if sid != nil {
					*sid = r.SessionID
				}
			}
		case textutil.ASCIIEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (value[0] < '0' || value[0] > '9') || (r.length >= 0 && n != r.length) {
				return fmt.Errorf("%w: Content-Length %q", errMalformedHead, textutil.Truncate(string(value), 30))
			}
			r.length = n
		case textutil.ASCIIEqualFold(name, "transfer-encoding"):
			if !textutil.ASCIIEqualFold(value, "chunked") || chunked {
				return fmt.Errorf("%w: Transfer-Encoding %q", errMalformedHead, textutil.Truncate(string(value), 30))
			}
			chunked = true
		case textutil.ASCIIEqualFold(name, "connection"):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = bytes.Trim(tok, " \t")
				closeTok = closeTok || textutil.ASCIIEqualFold(tok, "close")
				keepAlive = keepAlive || textutil.ASCIIEqualFold(tok, "keep-alive")
			}
		}
	}
	// HTTP/1.0 closes unless asked to keep alive; HTTP/1.1 keeps alive
	// unless asked to close.
	r.close = closeTok || (http10 && !keepAlive)
	if chunked {
		if r.length >= 0 || http10 {
			return fmt.Errorf("%w: chunked with Content-Length, or in HTTP/1.0", errMalformedHead)
		}
		r.length = -2
	}
	return nil
}

// headLine reads one line of a head without its line end, charging it to
// budget. The slice is valid until the next read.
func headLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("%w: a line longer than %d bytes", errMalformedHead, br.Size())
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *budget -= len(line); *budget < 0 {
		return nil, fmt.Errorf("%w: head larger than %d bytes", errMalformedHead, maxHeadBytes)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if bytes.IndexByte(line, '\r') >= 0 {
		return nil, fmt.Errorf("%w: stray CR", errMalformedHead)
	}
	return line, nil
}

// tokenChars are the bytes a header name may hold (RFC 9110's tchar),
// looked up rather than searched for: every header line is checked.
var tokenChars = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c)
	}
	return t
}()

func isToken(b []byte) bool {
	for _, c := range b {
		if !tokenChars[c] {
			return false
		}
	}
	return len(b) > 0
}

// hasCTL reports whether a header value holds a control character other
// than a tab.
func hasCTL(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return true
		}
	}
	return false
}

// contentType returns v as a string, without allocating for the media
// types MCP servers answer with.
func contentType(v []byte) string {
	switch string(v) {
	case "application/json":
		return "application/json"
	case "text/event-stream":
		return "text/event-stream"
	case "application/json; charset=utf-8":
		return "application/json; charset=utf-8"
	}
	return string(v)
}

// bodyReader frames a response body; a Content-Length body is read by lb.
func bodyReader(br *bufio.Reader, r *Response, method string, lb *lengthBody) io.ReadCloser {
	switch {
	case method == "HEAD" || r.StatusCode == 204 || r.StatusCode == 304:
		r.length = 0
		return noBody{}
	case r.length == -2:
		return &chunkedBody{cr: httputil.NewChunkedReader(br), br: br}
	case r.length >= 0:
		if r.length == 0 {
			return noBody{}
		}
		*lb = lengthBody{br: br, n: r.length}
		return lb
	}
	r.close = true // delimited by the connection's end
	return io.NopCloser(br)
}

type noBody struct{}

func (noBody) Read([]byte) (int, error) { return 0, io.EOF }
func (noBody) Close() error             { return nil }

// lengthBody reads exactly n bytes; an early end is io.ErrUnexpectedEOF.
type lengthBody struct {
	br *bufio.Reader
	n  int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.br.Read(p)
	b.n -= int64(n)
	if errors.Is(err, io.EOF) && b.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	if b.n == 0 && err == nil {
		err = io.EOF
	}
	return n, err
}

func (b *lengthBody) Close() error { return nil }

// chunkedBody reads a chunked body and the (empty) trailer section after it.
type chunkedBody struct {
	cr  io.Reader
	br  *bufio.Reader
	end bool
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.end {
		return 0, io.EOF
	}
	n, err := b.cr.Read(p)
	if errors.Is(err, io.EOF) {
		// The body ends with an empty trailer section: MCP servers send
		// no trailer fields, and a reader that skipped some could misframe
		// the next response.
		end, perr := b.br.Peek(2)
		if perr != nil || string(end) != "\r\n" {
			return n, fmt.Errorf("%w: chunked body not ended by an empty trailer", errMalformedHead)
		}
		_, _ = b.br.Discard(2)
		b.end = true
	}
	return n, err
}

func (b *chunkedBody) Close() error { return nil }

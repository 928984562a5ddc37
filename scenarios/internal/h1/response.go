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
	for {
		r, err := readHead(br)
		if err != nil {
			return nil, err
		}
		if r.StatusCode >= 200 {
			r.Body = bodyReader(br, r, method)
			return r, nil
		}
		// 1xx: no body; the final answer follows.
	}
}

func readHead(br *bufio.Reader) (*Response, error) {
	budget := maxHeadBytes
	line, err := headLine(br, &budget)
	if err != nil {
		return nil, err
	}
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return nil, fmt.Errorf("%w: status line %q", errMalformedHead, textutil.Truncate(string(line), 40))
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return nil, fmt.Errorf("%w: status line %q", errMalformedHead, textutil.Truncate(string(line), 40))
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return nil, fmt.Errorf("%w: status %d", errMalformedHead, code)
	}
	http10 := line[7] == '0'
	r := &Response{StatusCode: code, length: -1}
	chunked, closeTok, keepAlive := false, false, false
	for {
		line, err := headLine(br, &budget)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return nil, fmt.Errorf("%w: header line %q", errMalformedHead, textutil.Truncate(string(line), 40))
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if bytes.IndexFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) >= 0 {
			return nil, fmt.Errorf("%w: control character in a header value", errMalformedHead)
		}
		switch {
		case textutil.ASCIIEqualFold(name, "content-type"):
			r.ContentType = string(value)
		case textutil.ASCIIEqualFold(name, "mcp-session-id"):
			r.SessionID = string(value)
		case textutil.ASCIIEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (value[0] < '0' || value[0] > '9') || (r.length >= 0 && n != r.length) {
				return nil, fmt.Errorf("%w: Content-Length %q", errMalformedHead, textutil.Truncate(string(value), 30))
			}
			r.length = n
		case textutil.ASCIIEqualFold(name, "transfer-encoding"):
			if !textutil.ASCIIEqualFold(value, "chunked") || chunked {
				return nil, fmt.Errorf("%w: Transfer-Encoding %q", errMalformedHead, textutil.Truncate(string(value), 30))
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
			return nil, fmt.Errorf("%w: chunked with Content-Length, or in HTTP/1.0", errMalformedHead)
		}
		r.length = -2
	}
	return r, nil
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

func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}

// bodyReader frames a response body.
func bodyReader(br *bufio.Reader, r *Response, method string) io.ReadCloser {
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
		return &lengthBody{br: br, n: r.length}
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

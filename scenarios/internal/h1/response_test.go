package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name, in    string
		status      int
		body        string
		close       bool
		ct, session string
		err         bool
	}{
		{name: "length", in: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", status: 200, body: "{}", ct: "application/json"},
		{name: "session id, lf only", in: "HTTP/1.1 200 OK\nmcp-session-ID:  abc \nContent-Length: 0\n\n", status: 200, session: "abc"},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nNEXT", status: 200, body: "abcde"},
		{name: "chunked with trailer fields", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", err: true},
		{name: "close-delimited", in: "HTTP/1.1 200 OK\r\n\r\nuntil the end", status: 200, body: "until the end", close: true},
		{name: "connection close", in: "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 202, close: true},
		{name: "http/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
		{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
		{name: "no reason", in: "HTTP/1.1 204\r\n\r\n", status: 204},
		{name: "1xx skipped", in: "HTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny", status: 200, body: "y"},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", status: 200, err: true},
		{name: "not http", in: "<html>hello</html>\r\n\r\n", err: true},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: true},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: true},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", err: true},
		{name: "length and chunked", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", err: true},
		{name: "gzip encoding", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: true},
		{name: "folded header", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", err: true},
		{name: "space before colon", in: "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx", err: true},
		{name: "head cut short", in: "HTTP/1.1 200 OK\r\nContent-Le", err: true},
		{name: "huge line", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(tt.in)), readBufferSize)
			r, err := readResponse(br, "POST")
			var body []byte
			if err == nil {
				body, err = io.ReadAll(r.Body)
			}
			if tt.err {
				if err == nil {
					t.Fatalf("no error; status %d body %q", r.StatusCode, body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode != tt.status || string(body) != tt.body || r.close != tt.close || r.ContentType != tt.ct || r.SessionID != tt.session {
				t.Errorf("got status %d body %q close %v ct %q session %q", r.StatusCode, body, r.close, r.ContentType, r.SessionID)
			}
			if tt.name == "chunked" {
				if rest, _ := io.ReadAll(br); string(rest) != "NEXT" {
					t.Errorf("after the body %q is left, want the next response", rest)
				}
			}
		})
	}
}

// FuzzReadResponse: whatever our reader accepts, net/http reads the same
// way: status, the headers we use, the body and whether the connection
// stays open.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 404 Not Found\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\nabc"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nrest"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := readResponse(bufio.NewReaderSize(bytes.NewReader(data), readBufferSize), "POST")
		if err != nil {
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // a body cut short: net/http fails too, later or sooner
		}
		br := bufio.NewReaderSize(bytes.NewReader(data), readBufferSize)
		var hr *http.Response
		for {
			hr, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("we read status %d, net/http fails: %v", r.StatusCode, err)
			}
			if hr.StatusCode >= 200 {
				break
			}
		}
		hbody, herr := io.ReadAll(hr.Body)
		switch {
		case hr.StatusCode != r.StatusCode:
			t.Fatalf("status %d, net/http %d", r.StatusCode, hr.StatusCode)
		case hr.Header.Get("Content-Type") != r.ContentType || hr.Header.Get("Mcp-Session-Id") != r.SessionID:
			t.Fatalf("headers %q %q, net/http %q %q", r.ContentType, r.SessionID, hr.Header.Get("Content-Type"), hr.Header.Get("Mcp-Session-Id"))
		case herr != nil && !errors.Is(herr, io.ErrUnexpectedEOF):
			t.Fatalf("we read the body, net/http fails: %v", herr)
		case herr == nil && !bytes.Equal(body, hbody):
			t.Fatalf("body %q, net/http %q", body, hbody)
		case herr == nil && !r.close && hr.Close:
			t.Fatalf("we would reuse the connection, net/http would not")
		}
	})
}

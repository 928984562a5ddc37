package mcp

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
)

// FuzzListenRead: the notification stream's reader never panics, fails
// only with KindTooLarge, and does so exactly when the stream breaks a
// bound before its end: a line longer than maxLine, an event's data
// longer than maxEvent (both small here, so that short inputs reach
// them). Run: go test ./scenarios/mcp -run '^$' -fuzz FuzzListenRead.
func FuzzListenRead(f *testing.F) {
	f.Add([]byte("retry: 20\n\nid: a-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"), uint16(64), uint16(64))
	f.Add([]byte(": keep-alive\r\n\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n"), uint16(16), uint16(64))
	f.Add([]byte("data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), uint16(8), uint16(1024))
	f.Add([]byte("data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n"), uint16(32), uint16(24))
	f.Add([]byte("\xef\xbb\xbfdata: {}\r\rdata: [1]\n\n"), uint16(4), uint16(4))
	f.Fuzz(func(t *testing.T, body []byte, maxLine, maxEvent uint16) {
		ml, me := int(maxLine%512), int(maxEvent%512)
		l := &Listener{changed: new(atomic.Uint32), retry: listenRetry, maxLine: ml, maxEvent: me}
		err := l.read("x", bytes.NewReader(body))
		breaks := streamBreaks(body, ml, me)
		switch {
		case err == nil && breaks && !bytes.Contains(body, []byte(`"result"`)) && !bytes.Contains(body, []byte(`"error"`)):
			t.Fatalf("the stream breaks a bound (line %d, event %d) and nothing ended it first, yet no error", ml, me)
		case err == nil:
		case Classify(err) != KindTooLarge:
			t.Fatalf("error of kind %q, want only %q: %v", Classify(err), KindTooLarge, err)
		case !breaks:
			t.Fatalf("too large with no line over %d bytes nor event over %d: %v", ml, me, err)
		}
	})
}

// streamBreaks reports whether the stream, read as Listener.read does,
// has a line longer than maxLine or an event whose data passes maxEvent
// before its end.
func streamBreaks(body []byte, maxLine, maxEvent int) bool {
	pieces := bytes.Split(body, []byte{'\n'})
	data := 0
	for i, p := range pieces {
		line := p
		if i < len(pieces)-1 {
			line = append(p[:len(p):len(p)], '\n')
		}
		if lineLen(line) > maxLine {
			return true
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			data = 0
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data > 0 {
				data++
			}
			if data+len(v) > maxEvent {
				return true
			}
			data += len(v)
		}
	}
	return false
}

// FuzzReadBody: the body reader returns the body whole when it is
// within the bound, fails with a too-large error when it is not, and
// never returns more than the bound.
func FuzzReadBody(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), uint16(64))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), uint16(35))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), uint16(36))
	f.Add([]byte{}, uint16(0))
	f.Add([]byte("x"), uint16(0))
	f.Fuzz(func(t *testing.T, body []byte, max uint16) {
		got, err := readBody(bytes.NewReader(body), nil, int64(max))
		var tl *tooLargeError
		switch {
		case len(got) > int(max):
			t.Fatalf("read %d bytes, past the bound %d", len(got), max)
		case len(body) > int(max) && !errors.As(err, &tl):
			t.Fatalf("a %d-byte body under a %d-byte bound: %v, want too large", len(body), max, err)
		case len(body) > int(max) && Classify(transportError(t.Context(), nil, "x", err)) != KindTooLarge:
			t.Fatalf("too large classified as %q", Classify(transportError(t.Context(), nil, "x", err)))
		case len(body) <= int(max) && (err != nil || !bytes.Equal(got, body)):
			t.Fatalf("a %d-byte body under a %d-byte bound: %q, %v", len(body), max, got, err)
		}
	})
}

package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseResponse(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"result":{"v":1}}`
	tests := []struct {
		name, media, body string
		result            string // want this result; "" means want an error...
		code              int64  // ...or a JSON-RPC error with this code
		wantErr           bool
		tooLarge          bool // want a too-large error, not a protocol error
	}{
		{name: "json", media: mediaJSON, body: ok, result: `{"v":1}`},
		{name: "json batch", media: mediaJSON, body: `[{"jsonrpc":"2.0","method":"n"},` + ok + `]`, result: `{"v":1}`},
		{name: "json error null id", media: mediaJSON, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, code: -32700},
		{name: "json notification", media: mediaJSON, body: `{"jsonrpc":"2.0","method":"notifications/progress"}`, wantErr: true},
		{name: "json empty", media: mediaJSON, body: "", wantErr: true},
		{name: "json result null id", media: mediaJSON, body: `{"jsonrpc":"2.0","id":null,"result":{}}`, wantErr: true},
		{name: "json string id", media: mediaJSON, body: `{"jsonrpc":"2.0","id":"1","result":{}}`, wantErr: true},
		{name: "json null result", media: mediaJSON, body: `{"jsonrpc":"2.0","id":1,"result":null}`, result: `null`},
		{name: "sse", media: mediaSSE, body: "event: message\ndata: " + ok + "\n\n", result: `{"v":1}`},
		{name: "sse no space", media: mediaSSE, body: "data:" + ok + "\n\n", result: `{"v":1}`},
		{name: "sse crlf", media: mediaSSE, body: "id: 1\r\ndata: " + ok + "\r\n\r\n", result: `{"v":1}`},
		{name: "sse cr", media: mediaSSE, body: "retry: 5\rdata: " + ok + "\r\r", result: `{"v":1}`},
		{name: "sse bom", media: mediaSSE, body: "\xef\xbb\xbfdata: " + ok + "\n\n", result: `{"v":1}`},
		{name: "sse multi-line data", media: mediaSSE, body: "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\ndata: \"result\":{\"v\":1}}\n\n", result: `{"v":1}`},
		{name: "sse data lines joined by newline", media: mediaSSE, body: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\ndata: \"v\":1}}\n\n", result: "{\n\"v\":1}"},
		{name: "sse skips others", media: mediaSSE, body: ": keep-alive\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"sampling/createMessage\"}\n\n" +
			"event: endpoint\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"wrong\":1}}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n" +
			"data: " + ok + "\n\n" +
			"data: not even read\n\n", result: `{"v":1}`},
		{name: "sse no final blank line", media: mediaSSE, body: "data: " + ok, result: `{"v":1}`},
		{name: "sse long line", media: mediaSSE, body: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"s\":\"" + strings.Repeat("x", 10000) + "\"}}\n\n", result: `{"s":"` + strings.Repeat("x", 10000) + `"}`},
		{name: "sse empty", media: mediaSSE, body: "", wantErr: true},
		{name: "sse garbage", media: mediaSSE, body: "data: }{\n\n", wantErr: true},
		{name: "sse data split by blank line", media: mediaSSE, body: "data: {\"jsonrpc\":\"2.0\",\n\ndata: \"id\":1}\n\n", wantErr: true},
		{name: "other media", media: "text/html", body: ok, wantErr: true},
		{name: "too large", media: mediaSSE, body: ": " + strings.Repeat("x", MaxBodyBytes) + "\ndata: " + ok + "\n\n", tooLarge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time, to exercise the reader's buffering.
			r := iotest.OneByteReader(strings.NewReader(tt.body))
			if len(tt.body) > 1<<16 {
				r = strings.NewReader(tt.body)
			}
			resp, err := parseResponse(tt.media, r, 1)
			if tt.tooLarge {
				var tl *tooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("got %+v, %v; want a too-large error", resp, err)
				}
				return
			}
			if tt.wantErr {
				var pe *protocolError
				if !errors.As(err, &pe) {
					t.Fatalf("got %+v, %v; want a protocol error", resp, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.code != 0 {
				if resp.Error == nil || resp.Error.Code != tt.code {
					t.Fatalf("got %+v, want error code %d", resp, tt.code)
				}
				return
			}
			if resp.Error != nil || string(resp.Result) != tt.result {
				t.Fatalf("got result %s error %+v, want %s", resp.Result, resp.Error, tt.result)
			}
		})
	}
}

// FuzzParseResponse: the parser never panics, fails only with protocol
// errors, returns exactly one of result and error, and reads the same
// response from a JSON body and from that body sent as one SSE event.
func FuzzParseResponse(f *testing.F) {
	f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`))
	f.Add(false, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`))
	f.Add(true, []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add(true, []byte("data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n"))
	f.Fuzz(func(t *testing.T, sse bool, body []byte) {
		media := mediaJSON
		if sse {
			media = mediaSSE
		}
		resp, err := parseResponse(media, bytes.NewReader(body), 1)
		if err != nil {
			var pe *protocolError
			if !errors.As(err, &pe) {
				t.Fatalf("non-protocol error %T: %v", err, err)
			}
			if Classify(transportError(t.Context(), nil, "x", err)) != KindProtocol {
				t.Fatalf("parse error not classified as protocol: %v", err)
			}
			return
		}
		if (len(resp.Result) > 0) == (resp.Error != nil) {
			t.Fatalf("want exactly one of result and error: %+v", resp)
		}
		if len(resp.Result) > 0 && !json.Valid(resp.Result) {
			t.Fatalf("result is not valid JSON: %q", resp.Result)
		}
		if sse || bytes.ContainsAny(body, "\r\n") {
			return
		}
		// The same message as a single SSE event must read the same.
		ev := append(append([]byte("data: "), body...), "\n\n"...)
		resp2, err := parseResponse(mediaSSE, bytes.NewReader(ev), 1)
		if err != nil {
			t.Fatalf("JSON body parsed, the same as an SSE event did not: %v", err)
		}
		same := bytes.Equal(resp.Result, resp2.Result) && (resp.Error == nil) == (resp2.Error == nil)
		if same && resp.Error != nil {
			e1, e2 := resp.Error, resp2.Error
			same = e1.Code == e2.Code && e1.Message == e2.Message && bytes.Equal(e1.Data, e2.Data)
		}
		if !same {
			t.Fatalf("JSON %+v != SSE %+v", resp, resp2)
		}
	})
}

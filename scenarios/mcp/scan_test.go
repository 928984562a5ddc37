package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestScanMessageIsUnmarshal: the fast path reads every message it takes
// exactly as encoding/json does, and leaves the rest to encoding/json.
func TestScanMessageIsUnmarshal(t *testing.T) {
	for _, c := range []struct {
		msg  string
		fast bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi \"there\""}],"isError":false}}`, true},
		{`{"jsonrpc":"2.0","id":"a-1","error":{"code":-32602,"message":"unknown tool","data":{"x":[1,2]}}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}`, true},
		{`{"jsonrpc":"2.0","id":null,"error":null,"result":null}`, true},
		{` {"id":1, "jsonrpc":"2.0", "result":[], "extra":{"deep":[{}]}} `, true},
		{`{"jsonrpc":"2.0","id":1,"result":{},"result":{"second":true}}`, true}, // the last of a repeated member, as encoding/json
		{`{"jsonrpc":2,"id":1,"result":{}}`, false},                             // encoding/json's error says what is wrong
		{`{"jsonrpc":"2.0","id":1,"error":"boom"}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}`, false},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, false},
	} {
		var fast rpcMessage
		ok := scanMessage([]byte(c.msg), &fast)
		if ok != c.fast {
			t.Errorf("%s: fast path took it: %v, want %v", c.msg, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		var slow rpcMessage
		if err := json.Unmarshal([]byte(c.msg), &slow); err != nil {
			t.Fatalf("%s: %v", c.msg, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nfast %+v\njson %+v", c.msg, fast, slow)
		}
	}
}

package gateway

import (
	"net/http/httptest"
	"strings"
	"testing"
)

const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestSQLComment(t *testing.T) {
	for _, tc := range []struct {
		route, tp, ts, want string
	}{
		{"tools/call", testTraceparent, "", "/*application='mcp-gateway',route='tools%2Fcall',traceparent='" + testTraceparent + "'*/"},
		{"", testTraceparent, "congo=t61rcWkgMzE", "/*application='mcp-gateway',traceparent='" + testTraceparent + "',tracestate='congo%3Dt61rcWkgMzE'*/"},
		{"tools/call", "", "", ""},
		{"tools/call", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", "", ""}, // upper case: not W3C
		{"tools/call", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", ""}, // zero trace id
		{"tools/call", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "", ""},    // no flags
		{"tools/call", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01*/; DROP TABLE x", "", ""},
	} {
		if got := sqlComment(tc.route, tc.tp, tc.ts); got != tc.want {
			t.Errorf("sqlComment(%q, %q, %q) = %q, want %q", tc.route, tc.tp, tc.ts, got, tc.want)
		}
	}
	if got := commentValue("it's /a b*/"); got != `it\'s%20%2Fa%20b*%2F` {
		t.Errorf("commentValue: %s", got)
	}
}

func TestHTTPSQLComment(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"` + testTraceparent + `"},"name":"x"}}`
	want := "/*application='mcp-gateway',route='tools%2Fcall',traceparent='" + testTraceparent + "'*/"
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	if got := httpSQLComment(r, []byte(body)); got != want {
		t.Errorf("from _meta: %q", got)
	}
	other := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	r.Header.Set("Traceparent", other)
	if got := httpSQLComment(r, []byte(body)); !strings.Contains(got, other) {
		t.Errorf("the header wins: %q", got)
	}
	if got := httpSQLComment(httptest.NewRequest("POST", "/mcp", nil), []byte(`[1,2]`)); got != "" {
		t.Errorf("no trace context: %q", got)
	}
}

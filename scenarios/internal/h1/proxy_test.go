package h1

import (
	"net/url"
	"strings"
	"testing"
)

// TestProxyIgnored: a proxy variable that would route the target through
// a proxy is named, without the proxy's credentials; NO_PROXY, loopback
// targets and the other scheme's variable are not warned about.
func TestProxyIgnored(t *testing.T) {
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, "")
	}
	t.Setenv("HTTP_PROXY", "http://user:s3cret@proxy.example:3128")
	t.Setenv("NO_PROXY", "direct.example")
	for _, tc := range []struct {
		target string
		want   string // "" for no warning
	}{
		{"http://svc.example:8080/mcp", "HTTP_PROXY is set (proxy proxy.example:3128), but leakbench sends its load straight to svc.example:8080"},
		{"http://direct.example/mcp", ""}, // NO_PROXY
		{"http://127.0.0.1:8080/mcp", ""}, // loopback is never proxied
		{"http://localhost:8080/mcp", ""}, // nor localhost
		{"https://svc.example/mcp", ""},   // HTTPS_PROXY is not set
	} {
		u, err := url.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		got := ProxyIgnored(u)
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
		if strings.Contains(got, "s3cret") || strings.Contains(got, "user") {
			t.Errorf("%s: the warning shows the proxy's credentials: %q", tc.target, got)
		}
	}
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	u, _ := url.Parse("https://svc.example/mcp")
	if got := ProxyIgnored(u); !strings.HasPrefix(got, "HTTPS_PROXY is set") {
		t.Errorf("https target under HTTPS_PROXY: %q", got)
	}
}

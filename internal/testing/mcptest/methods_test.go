package mcptest

import (
	"net/http"
	"testing"
	"time"
)

// TestCachingAndPages: the 2026 lists and resources/read carry ttlMs and
// cacheScope; with PageSize the lists come in pages; Count tells how
// often each was fetched.
func TestCachingAndPages(t *testing.T) {
	s, url := start(t, Options{DualEra: true, TTL: 1500 * time.Millisecond, PageSize: 2})
	var names []string
	var cursor any
	for page := 0; ; page++ {
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		a := call2026(t, url, "tools/list", params, noCaps)
		r := a.msg.Result
		if a.status != http.StatusOK || r["ttlMs"] != float64(1500) || r["cacheScope"] != "public" || r["resultType"] != "complete" {
			t.Fatalf("page %d: %s", page, a.raw)
		}
		for _, tool := range r["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		if cursor = r["nextCursor"]; cursor == nil {
			break
		}
		if page > 3 {
			t.Fatal("no end to the pages")
		}
	}
	if len(names) != 3 || names[0] != "echo" || names[1] != "ask" || names[2] != "slow_task" {
		t.Fatalf("tools %v", names)
	}
	if n := s.Count("tools/list"); n != 2 {
		t.Errorf("Count(tools/list) = %d, want 2 (two pages)", n)
	}
	wantError(t, call2026(t, url, "tools/list", map[string]any{"cursor": "7"}, noCaps), http.StatusOK, -32602, "invalid cursor")

	for _, m := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		a := call2026(t, url, m, nil, noCaps)
		if a.msg.Result["ttlMs"] != float64(1500) || a.msg.Result["cacheScope"] != "public" {
			t.Fatalf("%s: %s", m, a.raw)
		}
	}
	a := call2026(t, url, "resources/list", nil, noCaps)
	if len(a.msg.Result["resources"].([]any)) != 2 || a.msg.Result["nextCursor"] == nil {
		t.Fatalf("resources/list page: %s", a.raw)
	}
	a = call2026(t, url, "resources/read", map[string]any{"uri": "test://doc/3"}, noCaps)
	if a.msg.Result["ttlMs"] != float64(1500) || a.msg.Result["contents"].([]any)[0].(map[string]any)["text"] != "document 3" {
		t.Fatalf("resources/read: %s", a.raw)
	}
	wantError(t, call2026(t, url, "resources/read", map[string]any{"uri": "test://nope"}, noCaps), http.StatusOK, -32602, "resource not found")

	// TTL 0 renders ttlMs 0; the 2025 era has no hints.
	_, url0 := start(t, Options{DualEra: true, Stateless: true})
	if a := call2026(t, url0, "tools/list", nil, noCaps); a.msg.Result["ttlMs"] != float64(0) {
		t.Fatalf("ttl 0: %s", a.raw)
	}
	if a := call2025(t, url0, "", "tools/list", nil); a.msg.Result["ttlMs"] != nil || a.msg.Result["cacheScope"] != nil {
		t.Fatalf("2025 list with hints: %s", a.raw)
	}
}

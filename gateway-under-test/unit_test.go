package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestParseVariants(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", "fixed", ""},
		{"fixed", "fixed", ""},
		{"commit-in-finally", "commit-in-finally", ""},
		{" held-while-waiting , held-across-upstream ", "held-while-waiting,held-across-upstream", ""},
		{"held-across-upstream,commit-in-finally,held-while-waiting", "commit-in-finally,held-while-waiting,held-across-upstream", ""},
		{"session-outside-request,commit-in-finally", "commit-in-finally,session-outside-request", ""},
		{"fixed,commit-in-finally", "", "cannot be combined"},
		{"leaky", "", `unknown gateway variant "leaky"`},
	} {
		got, err := ParseVariants(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseVariants(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseVariants(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if names := VariantNames(); names != "fixed, commit-in-finally, commit-in-finally-rare, held-while-waiting, held-while-polling, held-across-upstream, session-outside-request" {
		t.Errorf("VariantNames() = %q", names)
	}
}

func TestPaginate(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	id := func(s string) string { return s }
	var got []string
	after, pages := "", 0
	for {
		page, next := paginate(items, id, after, 2)
		pages++
		got = append(got, page...)
		if next == "" {
			break
		}
		if after, _ = decodeCursor(next); after != page[len(page)-1] {
			t.Fatalf("cursor %q does not continue after %q", next, page[len(page)-1])
		}
	}
	if !slices.Equal(got, items) || pages != 3 {
		t.Errorf("pages of 2: %v in %d pages, want all 5 in 3", got, pages)
	}
	// An item that went away between pages does not break the walk.
	if page, next := paginate([]string{"a", "c", "e"}, id, "b", 2); !slices.Equal(page, []string{"c", "e"}) || next != "" {
		t.Errorf("after a vanished key: %v %q", page, next)
	}
	if page, next := paginate([]string{"a"}, id, "z", 2); page == nil || len(page) != 0 || next != "" {
		t.Errorf("past the end: %#v %q, want an empty non-nil page", page, next)
	}
	if page, next := paginate(items, id, "", 5); len(page) != 5 || next != "" {
		t.Errorf("exactly one page: %v %q, want no next cursor", page, next)
	}
}

func TestDecodeCursorRejectsForeignCursors(t *testing.T) {
	for _, c := range []string{"not-a-cursor", "e30", "!!!", encodeCursor("")} {
		_, err := decodeCursor(c)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("decodeCursor(%q) = %v, want Invalid params", c, err)
		}
	}
}

func TestRegistryArgs(t *testing.T) {
	for _, tc := range []struct {
		raw, want, err string
	}{
		{``, "", ""},
		{`null`, "", ""},
		{`{}`, "", ""},
		{`{"input":"hi"}`, "hi", ""},
		{`{"input":5}`, "", "must be a string"},
		{`{"other":"x"}`, "", "unexpected property"},
		{`[1]`, "", "must be an object"},
		{`{"input":"` + strings.Repeat("x", 1001) + `"}`, "", "at most 1000"},
	} {
		got, err := registryArgs(json.RawMessage(tc.raw))
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
			t.Errorf("registryArgs(%.20s) = %q, %v; want %q, %q", tc.raw, got, err, tc.want, tc.err)
		}
	}
}

func TestDocumentURI(t *testing.T) {
	uri := documentURI(7, "handbook")
	if team, slug, ok := parseDocumentURI(uri); !ok || team != 7 || slug != "handbook" {
		t.Errorf("parseDocumentURI(%q) = %d %q %v", uri, team, slug, ok)
	}
	for _, bad := range []string{"", "leakbench://teams/x/documents/handbook", "leakbench://teams/7/documents/", "leakbench://teams/7/documents/a/b", "file:///etc/passwd"} {
		if _, _, ok := parseDocumentURI(bad); ok {
			t.Errorf("parseDocumentURI(%q) accepted", bad)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	base := Config{DSN: "postgres://x"}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		err    string
	}{
		{"defaults", func(*Config) {}, ""},
		{"no DSN", func(c *Config) { c.DSN = "" }, "DSN"},
		{"negative pool", func(c *Config) { c.PoolSize = -1 }, "pool size"},
		{"busy polling", func(c *Config) { c.PollInterval = time.Millisecond }, "poll interval"},
		{"task TTL too short", func(c *Config) { c.TaskTTL = 10 * time.Millisecond }, "task TTL"},
		{"tiny body limit", func(c *Config) { c.MaxBodyBytes = 10 }, "max body"},
		{"negative run delay", func(c *Config) { c.RunDelay = -time.Second }, "negative"},
		{"negative body-read timeout", func(c *Config) { c.BodyReadTimeout = -time.Second }, "negative"},
		{"negative idle timeout", func(c *Config) { c.IdleTimeout = -time.Second }, "negative"},
		{"upstream URL without a scheme", func(c *Config) { c.UpstreamURL = "127.0.0.1:8090" }, "upstream URL"},
	} {
		c := base
		tc.mutate(&c)
		err := c.withDefaults().validate()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestUpstreamCallURL(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"", ""},
		{"http://127.0.0.1:8090", "http://127.0.0.1:8090/call"},
		{"http://127.0.0.1:8090/", "http://127.0.0.1:8090/call"},
		{"https://up.example/v1", "https://up.example/v1/call"},
	} {
		u, err := upstreamCallURL(tc.base)
		if err != nil || (u == nil) != (tc.want == "") || (u != nil && u.String() != tc.want) {
			t.Errorf("upstreamCallURL(%q) = %v, %v; want %q", tc.base, u, err, tc.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:8090", "ftp://h/x", "http://", "http://user:s3cret@h:bad/"} {
		if _, err := upstreamCallURL(bad); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("upstreamCallURL(%q) = %v, want an error naming no part of the URL", bad, err)
		}
	}
}

// TestStartErrorsHideTheDSNPassword: a DSN that does not parse and one
// that reaches no server fail Start with errors (which leakbench prints)
// that do not contain the password.
func TestStartErrorsHideTheDSNPassword(t *testing.T) {
	const pw = "s3cret-pw"
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://app:" + pw + "@127.0.0.1:notaport/app", "parse database DSN"},
		{"host=127.0.0.1 port=1 user=app password=" + pw + " dbname=app connect_timeout=2", "reach the database"},
		{"postgres://app:" + pw + "@127.0.0.1:1/app?connect_timeout=2", "reach the database"},
	} {
		gw, err := Start(context.Background(), Config{DSN: tc.dsn, Listen: "127.0.0.1:0"})
		if err == nil {
			gw.Close(context.Background())
			t.Fatalf("Start with %s succeeded", tc.dsn)
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), pw) {
			t.Errorf("Start error %q; want %q, without the password", err, tc.want)
		}
	}
}

// TestDBUnavailable: 503 with Retry-After; the answer (sent before the
// caller is authenticated) names pool exhaustion but no database detail;
// a cancelled request gets no answer written.
func TestDBUnavailable(t *testing.T) {
	var logs bytes.Buffer
	g := &Gateway{log: slog.New(slog.NewTextHandler(&logs, nil))}
	connErr := errors.New("failed to connect to `user=app database=app`: 127.0.0.1:6432: refused")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("acquire database connection: %w", connErr), "database unavailable\n"},
		{ErrPoolTimeout, "database unavailable: " + ErrPoolTimeout.Error() + "\n"},
	} {
		w := httptest.NewRecorder()
		g.dbUnavailable(w, tc.err)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || w.Body.String() != tc.want {
			t.Errorf("%v: %d %q Retry-After %q; want 503 %q", tc.err, w.Code, w.Body, w.Header().Get("Retry-After"), tc.want)
		}
	}
	if !strings.Contains(logs.String(), "user=app") {
		t.Errorf("the log lacks the cause: %s", logs.String())
	}
	w := httptest.NewRecorder()
	g.dbUnavailable(w, fmt.Errorf("acquire: %w", context.Canceled))
	if w.Body.Len() != 0 || w.Code != http.StatusOK {
		t.Errorf("cancelled request answered %d %q", w.Code, w.Body)
	}
}

// TestDeclaresTasks: a tools/call becomes a task only when its own _meta
// declares the Tasks extension in a 2026-07-28 request.
func TestDeclaresTasks(t *testing.T) {
	tasks := map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}
	for _, tc := range []struct {
		name string
		meta mcp.Meta
		want bool
	}{
		{"declared", mcp.Meta{mcp.MetaKeyProtocolVersion: modernVersion, mcp.MetaKeyClientCapabilities: tasks}, true},
		{"later revision", mcp.Meta{mcp.MetaKeyProtocolVersion: "2027-01-01", mcp.MetaKeyClientCapabilities: tasks}, true},
		{"no capabilities", mcp.Meta{mcp.MetaKeyProtocolVersion: modernVersion}, false},
		{"other extensions", mcp.Meta{mcp.MetaKeyProtocolVersion: modernVersion,
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{"io.example/x": map[string]any{}}}}, false},
		{"not an object", mcp.Meta{mcp.MetaKeyProtocolVersion: modernVersion,
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{tasksExtension: true}}}, false},
		{"2025 era", mcp.Meta{mcp.MetaKeyClientCapabilities: tasks}, false},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: tc.meta, Name: waitForRunTool}}
		if got := declaresTasks(req); got != tc.want {
			t.Errorf("%s: declaresTasks = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package starter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// rawServer is a hand-written MCP server (2025 handshake, JSON answers)
// whose tools/list pages come from page(cursor): for servers no SDK
// would let one write.
func rawServer(t testing.TB, page func(cursor string) (tools []any, next string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "raw", "version": "0"}}
		case "tools/list":
			tools, next := page(req.Params.Cursor)
			res := map[string]any{"tools": tools}
			if next != "" {
				res["nextCursor"] = next
			}
			result = res
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestInitThousandsOfTools: 5,000 tools with deep and invalid schemas,
// 500 to a page: init lists them all, writes the first DefaultMaxTools
// (saying how many it left out), cuts deep schemas at MaxSchemaDepth,
// says which schemas are not schemas, and the file parses.
func TestInitThousandsOfTools(t *testing.T) {
	deep := map[string]any{"type": "integer", "minimum": 1, "maximum": 1}
	for range 40 {
		deep = map[string]any{"type": "object", "required": []any{"x"}, "properties": map[string]any{"x": deep}}
	}
	schemas := []any{
		map[string]any{"type": "object", "required": []any{"d"}, "properties": map[string]any{"d": deep}},
		"not a schema",
		map[string]any{"type": "object", "required": []any{"n"}, "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 3, "maximum": 4}}},
	}
	url := rawServer(t, func(cursor string) ([]any, string) {
		from, _ := strconv.Atoi(cursor)
		var tools []any
		for i := from; i < from+500; i++ {
			tools = append(tools, map[string]any{"name": fmt.Sprintf("t%04d", i), "inputSchema": schemas[i%3]})
		}
		if from+500 >= 5000 {
			return tools, ""
		}
		return tools, strconv.Itoa(from + 500)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Init(ctx, Options{Target: url})
	if err != nil {
		t.Fatal(err)
	}
	svc := res.Service
	if svc.ToolsListed != 5000 || svc.ToolsCut || len(svc.Tools) != DefaultMaxTools {
		t.Fatalf("listed %d (cut %v), kept %d; want 5000 listed, %d kept", svc.ToolsListed, svc.ToolsCut, len(svc.Tools), DefaultMaxTools)
	}
	y := string(res.YAML)
	for _, want := range []string{
		"# 4800 more tools listed were left out",
		"nested deeper than 8 levels: not followed",
		"# # TODO: its inputSchema is a string, not a JSON Schema object: no arguments sent",
		`"n": "{{randInt 3 4}}"   # 3 ≤ n ≤ 4`,
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "5000 tools listed, 200 written") {
		t.Errorf("notes %q", res.Notes)
	}
}

// manyTools serves n tools, 500 to a page, each with an object schema of
// a required enum, bounded integer and free text.
func manyTools(tb testing.TB, n int) string {
	schema := map[string]any{"type": "object", "required": []any{"a", "b", "c"}, "properties": map[string]any{
		"a": map[string]any{"enum": []any{"x", "y"}}, "b": map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
		"c": map[string]any{"type": "string", "description": strings.Repeat("words ", 50)}}}
	return rawServer(tb, func(cursor string) ([]any, string) {
		from, _ := strconv.Atoi(cursor)
		var tools []any
		for i := from; i < min(from+500, n); i++ {
			tools = append(tools, map[string]any{"name": fmt.Sprintf("t%05d", i), "description": strings.Repeat("a tool ", 20), "inputSchema": schema})
		}
		if from+500 >= n {
			return tools, ""
		}
		return tools, strconv.Itoa(from + 500)
	})
}

// BenchmarkInitThousandsOfTools: what init costs against a server of
// 10,000 tools (200 written): allocations and time per init.
func BenchmarkInitThousandsOfTools(b *testing.B) {
	url := manyTools(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := Init(ctx, Options{Target: url})
		if err != nil {
			b.Fatal(err)
		}
		if res.Service.ToolsListed != 10_000 {
			b.Fatalf("listed %d", res.Service.ToolsListed)
		}
	}
}

// TestInitEndlessCursor: a server whose cursors never end is listed up
// to the bound, and the file says the listing was cut.
func TestInitEndlessCursor(t *testing.T) {
	url := rawServer(t, func(cursor string) ([]any, string) {
		n, _ := strconv.Atoi(cursor)
		tools := make([]any, 1000)
		for i := range tools {
			tools[i] = map[string]any{"name": fmt.Sprintf("t%d_%d", n, i), "inputSchema": map[string]any{"type": "object"}}
		}
		return tools, strconv.Itoa(n + 1)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Init(ctx, Options{Target: url, MaxTools: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Service.ToolsCut || res.Service.ToolsListed != maxListed || !strings.Contains(string(res.YAML), "The listing itself stopped at its bound") {
		t.Errorf("listed %d, cut %v; want the listing cut at %d and said so", res.Service.ToolsListed, res.Service.ToolsCut, maxListed)
	}
}

// TestInitNotMCP: a target that is not MCP, or not there, or a bad
// option: each error says which.
func TestInitNotMCP(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>Not Found</h1>")
	}))
	defer html.Close()
	okJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	defer okJSON.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`)
		chunk := strings.Repeat("a", 1<<20)
		for range 20 {
			fmt.Fprint(w, chunk)
		}
		fmt.Fprint(w, `"}}`)
	}))
	defer huge.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tt := range []struct {
		name, target string
		is           error
		want         string
	}{
		{"an HTML 404", html.URL + "/mcp", ErrNotMCP, "the target is not an MCP server: it answered http 404 text/html: <h1>Not Found</h1>"},
		{"a JSON API", okJSON.URL, ErrNotMCP, "it answered http 200 application/json"},
		{"nothing listening", closed, nil, "connect:"},
		{"an answer too large", huge.URL, nil, "larger than"},
		{"no target", "", ErrOptions, "no target"},
		{"not a URL", "ftp://x/mcp", ErrOptions, `target "ftp://x/mcp" is not an http(s) URL`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Init(ctx, Options{Target: tt.target, Timeout: 5 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) || (tt.is == nil && errors.Is(err, ErrNotMCP)) {
				t.Errorf("error %v; want %v containing %q", err, tt.is, tt.want)
			}
		})
	}
	// A probe DSN that is not one is a usage error, without its text.
	_, err = Init(ctx, Options{Target: rawServer(t, func(string) ([]any, string) { return nil, "" }), ProbeDSN: "postgres://u:s3cret@[::1"})
	if !errors.Is(err, ErrOptions) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("bad probe DSN: %v", err)
	}
}

// TestWriteFile: never replaces a file without force; with it, replaces.
func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leakbench.yaml")
	if err := WriteFile(path, []byte("one"), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second write: %v; want ErrExists naming --force", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("the file was replaced: %q", b)
	}
	if err := WriteFile(path, []byte("three"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Errorf("force did not replace: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".leakbench-init-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestStarterHeaders: headers init was given go into the file; a
// secret-looking one as a ${NAME} reference, never its value, and the
// file still parses (the variable given by -e).
func TestStarterHeaders(t *testing.T) {
	url := rawServer(t, func(string) ([]any, string) { return nil, "" })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Init(ctx, Options{Target: url, Headers: map[string]string{"X-Team": "red", "X-Api-Key": "k3y-s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	y := string(res.YAML)
	if strings.Contains(y, "k3y-s3cret") || !strings.Contains(y, `"X-Api-Key": "${X_API_KEY}"`) || !strings.Contains(y, `"X-Team": "red"`) {
		t.Errorf("headers written:\n%s", y)
	}
	var probe rundir.ProbeSettings
	p, err := scenariofile.ParseWith(res.YAML, "h.yaml", scenariofile.Options{Vars: map[string]string{"X_API_KEY": "v"}, LookupEnv: scenariofile.NoEnv},
		scenariofile.Section{Key: "probe", Into: &probe})
	if err != nil || p.Headers["X-Api-Key"] != "v" {
		t.Errorf("parse with -e X_API_KEY=v: %v", err)
	}
}

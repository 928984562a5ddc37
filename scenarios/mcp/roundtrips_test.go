package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// rpcServer answers 2026-07-28 requests with handle(method, body) → the
// JSON-RPC result (or a whole body starting with '!'), and records every
// request body by method.
type rpcServer struct {
	handle func(method string, body []byte) string
	mu     sync.Mutex
	got    map[string][]string
}

func (rs *rpcServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	method := r.Header.Get("Mcp-Method")
	if strings.HasPrefix(method, "tasks/") && r.Header.Get("Mcp-Name") != gjson.GetBytes(body, "params.taskId").String() {
		http.Error(w, "Mcp-Name is not the taskId", http.StatusBadRequest)
		return
	}
	rs.mu.Lock()
	if rs.got == nil {
		rs.got = map[string][]string{}
	}
	rs.got[method] = append(rs.got[method], string(body))
	rs.mu.Unlock()
	res := `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
	if method != "server/discover" {
		res = rs.handle(method, body)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+mcptest.IDOf(body)+`,"result":`+res+`}`)
}

func (rs *rpcServer) bodies(method string) []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.got[method]...)
}

// modernSession is an initialized 2026-07-28 session on srv.
func modernSession(t *testing.T, srv http.Handler) *Session {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := NewClient(hs.URL, ClientOptions{ProtocolVersion: Version20260728})
	t.Cleanup(c.CloseIdleConnections)
	s := c.NewSession("")
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.CloseConn)
	return s
}

// TestInputRequiredRoundTrip: a tools/call answered input_required is sent
// again under a new id, declaring the input capabilities, with the
// step's answer under the server's key and the requestState as it came;
// the observer hears of the retry; the final result is the call's.
func TestInputRequiredRoundTrip(t *testing.T) {
	rs := &rpcServer{handle: func(method string, body []byte) string {
		if !gjson.GetBytes(body, "params.inputResponses").Exists() {
			return `{"resultType":"input_required","inputRequests":{"user_name":{"method":"elicitation/create","params":{"mode":"form","message":"Name?"}}},"requestState":"st\"ate-1"}`
		}
		return `{"content":[{"type":"text","text":"hello"}]}`
	}}
	s := modernSession(t, rs)
	var subs []SubRequest
	s.Observe(func(r SubRequest) { subs = append(subs, r) })
	s.Next(&RequestOptions{Inputs: Inputs{"elicitation/create": json.RawMessage(`{"action":"accept","content":{"name":"ada"}}`)}})
	if err := s.CallTool(context.Background(), "greet", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	got := rs.bodies("tools/call")
	if len(got) != 2 {
		t.Fatalf("%d tools/call requests, want 2", len(got))
	}
	retry := gjson.Parse(got[1])
	if retry.Get("id").Int() == gjson.Get(got[0], "id").Int() {
		t.Error("the retry reused the first request's id")
	}
	if v := retry.Get("params.requestState").String(); v != `st"ate-1` {
		t.Errorf("requestState %q, want the server's echoed", v)
	}
	if v := retry.Get("params.inputResponses.user_name.content.name").String(); v != "ada" {
		t.Errorf("inputResponses %s", retry.Get("params.inputResponses").Raw)
	}
	if retry.Get("params.arguments.x").Int() != 1 || retry.Get("params.name").String() != "greet" {
		t.Errorf("the retry lost the request's params: %s", retry.Get("params").Raw)
	}
	for _, b := range got {
		if !gjson.Get(b, `params._meta.io\.modelcontextprotocol/clientCapabilities.elicitation`).Exists() {
			t.Errorf("a request of a step with inputs declares no elicitation: %s", b)
		}
	}
	if len(subs) != 1 || !subs[0].Retry || subs[0].Method != "tools/call" || subs[0].Err != nil {
		t.Errorf("observer heard %+v, want one tools/call retry", subs)
	}
	// The options applied to that request only.
	if err := s.CallTool(context.Background(), "greet", nil); err == nil || !strings.Contains(err.Error(), "give it inputs:") {
		t.Errorf("a step without inputs: %v", err)
	}
	if b := rs.bodies("tools/call"); gjson.Get(b[len(b)-1], `params._meta.io\.modelcontextprotocol/clientCapabilities.elicitation`).Exists() {
		t.Error("a step without inputs declared elicitation")
	}
}

// TestInputRequiredBadInput: a request the inputs do not answer, and a
// server that asks forever, are clear protocol errors.
func TestInputRequiredBadInput(t *testing.T) {
	rs := &rpcServer{handle: func(string, []byte) string {
		return `{"resultType":"input_required","inputRequests":{"k1":{"method":"sampling/createMessage","params":{}}}}`
	}}
	s := modernSession(t, rs)
	s.Next(&RequestOptions{Inputs: Inputs{"elicitation/create": json.RawMessage(`{}`)}})
	err := s.CallTool(context.Background(), "t", nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindProtocol || !strings.Contains(e.Msg, `input "k1" (sampling/createMessage)`) {
		t.Errorf("unanswered input: %v", err)
	}
	s.Next(&RequestOptions{Inputs: Inputs{"k1": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"x"}}`)}})
	err = s.CallTool(context.Background(), "t", nil)
	if !errors.As(err, &e) || e.Kind != KindProtocol || !strings.Contains(e.Msg, "still asks for input") {
		t.Errorf("endless input_required: %v", err)
	}
	if n := len(rs.bodies("tools/call")); n != 2+maxInputRounds {
		t.Errorf("%d tools/call requests, want %d", n, 2+maxInputRounds)
	}
}

// taskServer runs every tools/call of a client declaring Tasks as a task
// that completes (or fails) after polls tasks/get.
type taskServer struct {
	rpcServer
	polls    atomic.Int64
	cancels  atomic.Int64
	doneAt   int64
	fail     bool
	declared atomic.Bool
}

func newTaskServer(doneAt int64, fail bool) *taskServer {
	ts := &taskServer{doneAt: doneAt, fail: fail}
	ts.handle = func(method string, body []byte) string {
		const task = `"taskId":"t-1","createdAt":"2026-12-01T00:00:00Z","lastUpdatedAt":"2026-12-01T00:00:00Z","ttlMs":60000,"pollIntervalMs":10`
		switch method {
		case "tools/call":
			ts.declared.Store(gjson.GetBytes(body, `params._meta.io\.modelcontextprotocol/clientCapabilities.extensions.io\.modelcontextprotocol/tasks`).Exists())
			return `{"resultType":"task","status":"working",` + task + `}`
		case "tasks/get":
			switch n := ts.polls.Add(1); {
			case ts.cancels.Load() > 0:
				return `{"status":"cancelled",` + task + `}`
			case n < ts.doneAt:
				return `{"status":"working",` + task + `}`
			case ts.fail:
				return `{"status":"failed",` + task + `,"error":{"code":-32603,"message":"boom"}}`
			}
			return `{"resultType":"complete","status":"completed",` + task + `,"result":{"content":[{"type":"text","text":"done"}],"isError":false}}`
		case "tasks/cancel":
			ts.cancels.Add(1)
			return `{"resultType":"complete"}`
		}
		return `{}`
	}
	return ts
}

// TestTaskPolled: a tools/call run as a task declares the extension, is
// polled with tasks/get until it completes, and ends as the call would
// have; each poll is observed.
func TestTaskPolled(t *testing.T) {
	ts := newTaskServer(3, false)
	s := modernSession(t, ts)
	var polls int
	s.Observe(func(r SubRequest) {
		if r.Method == MethodTasksGet && r.Err == nil {
			polls++
		}
	})
	s.KeepResults(true)
	s.Next(&RequestOptions{Task: &TaskOptions{}})
	if err := s.CallTool(context.Background(), "slow", nil); err != nil {
		t.Fatal(err)
	}
	if !ts.declared.Load() {
		t.Error("the tools/call did not declare the Tasks extension")
	}
	if polls != 3 || ts.polls.Load() != 3 {
		t.Errorf("observed %d polls, server saw %d, want 3", polls, ts.polls.Load())
	}
	if got := gjson.GetBytes(s.Result(), "content.0.text").String(); got != "done" {
		t.Errorf("result %s, want the task's", s.Result())
	}
	if id := gjson.Get(ts.bodies("tasks/get")[0], "params.taskId").String(); id != "t-1" {
		t.Errorf("tasks/get asked for %q", id)
	}
}

// TestTaskEnds: a failed task is its JSON-RPC error; cancelAfter sends
// tasks/cancel and ends the step as aborted; a task that outlives its
// timeout is a timeout.
func TestTaskEnds(t *testing.T) {
	var e *Error
	s := modernSession(t, newTaskServer(2, true))
	s.Next(&RequestOptions{Task: &TaskOptions{}})
	if err := s.CallTool(context.Background(), "slow", nil); !errors.As(err, &e) || e.Kind != KindJSONRPC || e.Code != -32603 || !strings.Contains(e.Msg, "boom") {
		t.Errorf("failed task: %v", err)
	}
	ts := newTaskServer(1<<30, false)
	s = modernSession(t, ts)
	s.Next(&RequestOptions{Task: &TaskOptions{CancelAfter: 60 * time.Millisecond}})
	if err := s.CallTool(context.Background(), "slow", nil); !errors.As(err, &e) || e.Kind != KindAborted {
		t.Errorf("cancelled task: %v", err)
	}
	if ts.cancels.Load() != 1 || ts.polls.Load() < 2 {
		t.Errorf("%d cancels after %d polls, want 1 after some", ts.cancels.Load(), ts.polls.Load())
	}
	ts = newTaskServer(1<<30, false)
	s = modernSession(t, ts)
	s.Next(&RequestOptions{Task: &TaskOptions{Timeout: 50 * time.Millisecond}})
	if err := s.CallTool(context.Background(), "slow", nil); !errors.As(err, &e) || e.Kind != KindTimeout {
		t.Errorf("task past its timeout: %v", err)
	}
	if ts.cancels.Load() != 1 {
		t.Errorf("a task given up on was not cancelled (%d)", ts.cancels.Load())
	}
	// Without task options, a task answer is a protocol error.
	if err := s.CallTool(context.Background(), "slow", nil); !errors.As(err, &e) || e.Kind != KindProtocol || !strings.Contains(e.Msg, "did not declare the Tasks extension") {
		t.Errorf("undeclared task: %v", err)
	}
}

// TestListCache: with the cache on, a listing is fetched again only once
// its ttlMs has passed (its pages' shortest), a resource per URI; a
// result without ttlMs, or the cache off, is fetched every time.
func TestListCache(t *testing.T) {
	ttl := map[string]string{"tools/list": `,"ttlMs":150`, "prompts/list": ``, "resources/read": `,"ttlMs":60000`}
	rs := &rpcServer{handle: func(method string, body []byte) string {
		if method == "tools/list" && !gjson.GetBytes(body, "params.cursor").Exists() {
			return `{"tools":[],"nextCursor":"p2","ttlMs":60000}`
		}
		return `{"tools":[],"prompts":[],"contents":[]` + ttl[method] + `}`
	}}
	s := modernSession(t, rs)
	s.SetCache(true)
	ctx := context.Background()
	count := func(m string) int { return len(rs.bodies(m)) }
	for range 3 {
		if err := s.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := count("tools/list"); n != 2 || !s.Cached() {
		t.Errorf("3 listings of 2 pages sent %d requests (cached %v), want 2", n, s.Cached())
	}
	time.Sleep(200 * time.Millisecond) // past the second page's 150 ms
	if _ = s.ListTools(ctx); count("tools/list") != 4 || s.Cached() {
		t.Errorf("a stale listing was not fetched again: %d requests", count("tools/list"))
	}
	for range 2 {
		_ = s.ListPrompts(ctx)
	}
	if n := count("prompts/list"); n != 2 {
		t.Errorf("a list without ttlMs was cached: %d requests", n)
	}
	for _, uri := range []string{"a://1", "a://2", "a://1"} {
		_ = s.ReadResource(ctx, uri)
	}
	if n := count("resources/read"); n != 2 {
		t.Errorf("3 reads of 2 URIs sent %d, want 2", n)
	}
	s.SetCache(false)
	_ = s.ReadResource(ctx, "a://1")
	if n := count("resources/read"); n != 3 || s.Cached() {
		t.Errorf("with the cache off a fresh read was not sent: %d", n)
	}
}

// TestRoundTripsBadInput: broken task and input_required answers are
// protocol errors that quote the server (token masked), not hangs.
func TestRoundTripsBadInput(t *testing.T) {
	const token = "tok-roundtrips-9"
	tests := []struct {
		name, call, get string // tools/call's and tasks/get's results
		opts            RequestOptions
		want            string
	}{
		{"task without taskId", `{"resultType":"task","status":"working","note":"` + token + `"}`, ``, RequestOptions{Task: &TaskOptions{}},
			`the task has no taskId; the server answered {"resultType":"task","status":"working","note":"xxxxx`},
		{"unknown task status", `{"resultType":"task","taskId":"a","status":"sleeping"}`, ``, RequestOptions{Task: &TaskOptions{}}, `unknown task status "sleeping"`},
		{"poll answers another task", `{"resultType":"task","taskId":"a","status":"working","pollIntervalMs":10}`,
			`{"taskId":"b","status":"working"}`, RequestOptions{Task: &TaskOptions{}}, `tasks/get for "a" answered task "b"`},
		{"completed without result", `{"resultType":"task","taskId":"a","status":"working","pollIntervalMs":10}`,
			`{"taskId":"a","status":"completed"}`, RequestOptions{Task: &TaskOptions{}}, `a completed task carries no result object`},
		{"input_required with neither", `{"resultType":"input_required"}`, ``, RequestOptions{Inputs: Inputs{"x": json.RawMessage(`{}`)}},
			`must carry inputRequests or requestState`},
		{"requestState not a string", `{"resultType":"input_required","requestState":7}`, ``, RequestOptions{Inputs: Inputs{"x": json.RawMessage(`{}`)}},
			`requestState is not a string`},
		{"inputRequests not an object", `{"resultType":"input_required","inputRequests":[1]}`, ``, RequestOptions{Inputs: Inputs{"x": json.RawMessage(`{}`)}},
			`inputRequests is not an object`},
		{"unknown resultType", `{"resultType":"later"}`, ``, RequestOptions{Task: &TaskOptions{}}, `unknown resultType "later"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &rpcServer{handle: func(method string, _ []byte) string {
				if method == MethodTasksGet {
					return tt.get
				}
				return tt.call
			}}
			hs := httptest.NewServer(rs)
			defer hs.Close()
			c := NewClient(hs.URL, ClientOptions{ProtocolVersion: Version20260728})
			defer c.CloseIdleConnections()
			s := c.NewSession(token)
			defer s.CloseConn()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			var created, ends int
			s.Observe(func(r SubRequest) {
				switch {
				case r.Task == TaskCreated:
					created++
				case r.Task != "":
					ends++
				}
			})
			o := tt.opts
			s.Next(&o)
			err := s.CallTool(ctx, "t", nil)
			if ends != created {
				t.Errorf("%d tasks created, %d ended: every task created must be counted as ended", created, ends)
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindProtocol || !strings.Contains(e.Msg, tt.want) || strings.Contains(err.Error(), token) {
				t.Errorf("got %v, want a protocol error containing %q, token masked", err, tt.want)
			}
		})
	}
}

// TestCacheEdges: a read answered after an input_required retry is not
// cached (its result depends on the inputs); a listing with a page
// without ttlMs is not cached, whichever page it is; a list_changed
// notification on the user's stream makes the cached list stale at once.
func TestCacheEdges(t *testing.T) {
	rs := &rpcServer{handle: func(method string, body []byte) string {
		switch {
		case method == "resources/read" && !gjson.GetBytes(body, "params.inputResponses").Exists():
			return `{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list","params":{}}}}`
		case method == "resources/read":
			return `{"contents":[],"ttlMs":60000}`
		case method == "prompts/list" && !gjson.GetBytes(body, "params.cursor").Exists():
			return `{"prompts":[],"nextCursor":"p2"}` // no ttlMs
		}
		return `{"tools":[],"prompts":[],"ttlMs":60000}`
	}}
	s := modernSession(t, rs)
	s.SetCache(true)
	ctx := context.Background()
	for range 2 {
		s.Next(&RequestOptions{Inputs: Inputs{"roots/list": json.RawMessage(`{"roots":[]}`)}})
		if err := s.ReadResource(ctx, "a://1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rs.bodies("resources/read")); n != 4 || s.Cached() {
		t.Errorf("two reads answered through input_required sent %d requests (cached %v), want 4: such results must not be cached", n, s.Cached())
	}
	for range 2 {
		_ = s.ListPrompts(ctx)
	}
	if n := len(rs.bodies("prompts/list")); n != 4 {
		t.Errorf("a listing whose first page has no ttlMs was cached: %d pages sent, want 4", n)
	}
	_ = s.ListTools(ctx)
	_ = s.ListTools(ctx)
	if n := len(rs.bodies("tools/list")); n != 1 || !s.Cached() {
		t.Fatalf("tools/list sent %d times, want 1 and then the cache", n)
	}
	l := s.Listener(ListenHooks{})
	l.dispatch([]byte(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`))
	_ = s.ListTools(ctx)
	if n := len(rs.bodies("tools/list")); n != 1 {
		t.Errorf("a prompts list change made tools/list stale: %d sent", n)
	}
	l.dispatch([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`))
	_ = s.ListTools(ctx)
	if n := len(rs.bodies("tools/list")); n != 2 || s.Cached() {
		t.Errorf("after tools/list_changed the cached list was served (%d sent), want it fetched again", n)
	}
	_ = s.ListTools(ctx)
	if n := len(rs.bodies("tools/list")); n != 2 {
		t.Errorf("the fetched list was not cached again: %d sent", n)
	}
}

package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawClient speaks 2026-07-28 JSON-RPC over HTTP by hand — the wire a
// Tasks client sends, which go-sdk's client (no Tasks support) cannot:
// every request's params._meta names the protocol version, the client and
// its per-request capabilities (the Tasks extension when tasks is set),
// with the headers SEP-2243 and SEP-2663 ask for (Mcp-Method; Mcp-Name:
// the tool for tools/call, the task id for tasks/*).
type rawClient struct {
	url, token string
	tasks      bool
	id         atomic.Int64
}

// rpcAnswer is one answer: its HTTP status and either a result or a
// JSON-RPC error (neither when the gateway answered before MCP, e.g. 503).
type rpcAnswer struct {
	status int
	result json.RawMessage
	err    *rpcError
	body   string // when it was no JSON-RPC answer
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (a rpcAnswer) String() string {
	switch {
	case a.err != nil:
		return fmt.Sprintf("HTTP %d, JSON-RPC error %d %s", a.status, a.err.Code, a.err.Message)
	case a.result != nil:
		return fmt.Sprintf("HTTP %d, result %s", a.status, a.result)
	}
	return fmt.Sprintf("HTTP %d %s", a.status, strings.TrimSpace(a.body))
}

// wireTask is a Task as the gateway sends it (CreateTaskResult or
// tasks/get result).
type wireTask struct {
	ResultType     string `json:"resultType"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs"`
	Result         *struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// call sends method with params (may be nil); name is the Mcp-Name header
// ("" for none).
func (c *rawClient) call(ctx context.Context, method, name string, params map[string]any) (rpcAnswer, error) {
	return c.send(ctx, method, name, params, true)
}

func (c *rawClient) send(ctx context.Context, method, name string, params map[string]any, meta bool) (rpcAnswer, error) {
	if params == nil {
		params = map[string]any{}
	}
	if meta {
		caps := map[string]any{}
		if c.tasks {
			caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		}
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernVersion,
			"io.modelcontextprotocol/clientCapabilities": caps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		}
	}
	id := c.id.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return rpcAnswer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return rpcAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rpcAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcAnswer{}, err
	}
	a := rpcAnswer{status: resp.StatusCode, body: string(b)}
	msgs := [][]byte{b}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		msgs = nil
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				msgs = append(msgs, []byte(strings.TrimSpace(data)))
			}
		}
	}
	for _, m := range msgs {
		var msg struct {
			ID     *int64          `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal(m, &msg) != nil || (msg.Result == nil && msg.Error == nil) {
			continue
		}
		if msg.ID == nil || *msg.ID == id {
			a.result, a.err = msg.Result, msg.Error
			break
		}
	}
	return a, nil
}

// mustCall is call for requests that must get a result.
func (c *rawClient) mustCall(t testing.TB, ctx context.Context, method, name string, params map[string]any) json.RawMessage {
	t.Helper()
	a, err := c.call(ctx, method, name, params)
	if err != nil {
		t.Fatalf("%s %s: %v", method, name, err)
	}
	if a.result == nil {
		t.Fatalf("%s %s: %s", method, name, a)
	}
	return a.result
}

// startRun starts a run as c's user and returns its id.
func (c *rawClient) startRun(t testing.TB, ctx context.Context) int64 {
	t.Helper()
	var res struct {
		StructuredContent struct {
			RunID int64 `json:"run_id"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	raw := c.mustCall(t, ctx, "tools/call", "start_run", map[string]any{"name": "start_run", "arguments": map[string]any{"name": "tasks test"}})
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError || res.StructuredContent.RunID == 0 {
		t.Fatalf("start_run: %s (%v)", raw, err)
	}
	return res.StructuredContent.RunID
}

// waitForRun calls wait_for_run for run id (a task when c declares the
// extension and the gateway makes one).
func (c *rawClient) waitForRun(ctx context.Context, id int64, maxWait float64) (rpcAnswer, error) {
	return c.call(ctx, "tools/call", "wait_for_run", map[string]any{"name": "wait_for_run",
		"arguments": map[string]any{"run_id": id, "max_wait_seconds": maxWait}})
}

// task calls one of the tasks/* methods about task id.
func (c *rawClient) task(ctx context.Context, method, id string) (rpcAnswer, error) {
	return c.call(ctx, method, id, map[string]any{"taskId": id})
}

// decodeTask reads a Task out of a result (the zero Task, and the test
// failed, when it is not JSON: not fatal, for the load's goroutines).
func decodeTask(t testing.TB, raw json.RawMessage) wireTask {
	t.Helper()
	var task wireTask
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Errorf("decode task %s: %v", raw, err)
	}
	return task
}

// terminal reports whether a task status is a final one.
func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// parseTaskTime checks an ISO 8601 timestamp of a task.
func parseTaskTime(t testing.TB, what, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("%s %q is no ISO 8601 timestamp: %v", what, s, err)
	}
	return ts
}

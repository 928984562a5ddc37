package mcptest

import (
	"net/http"
	"testing"
	"time"
)

var tasksExt = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// TestTasks: slow_task makes a task for a client with the extension,
// which tasks/get shows working then completed; a cancelled one stays
// cancelled; a failing one ends failed; without the extension the tool
// answers when done.
func TestTasks(t *testing.T) {
	const dur = 150 * time.Millisecond
	s, url := start(t, Options{DualEra: true, TaskDuration: dur, TaskPollInterval: 20 * time.Millisecond})
	slow := map[string]any{"name": "slow_task", "arguments": map[string]any{}}

	a := call2026(t, url, "tools/call", slow, tasksExt)
	r := a.msg.Result
	id, _ := r["taskId"].(string)
	created, err := time.Parse(time.RFC3339, r["createdAt"].(string))
	if a.status != http.StatusOK || r["resultType"] != "task" || id == "" || r["status"] != "working" || err != nil ||
		r["ttlMs"] != float64(60000) || r["pollIntervalMs"] != float64(20) || r["lastUpdatedAt"] == nil {
		t.Fatalf("CreateTaskResult: %v %s", err, a.raw)
	}
	get := func(id string) answer { return call2026(t, url, "tasks/get", map[string]any{"taskId": id}, tasksExt) }
	var last map[string]any
	for polls := 0; ; polls++ {
		last = get(id).msg.Result
		if last["resultType"] != "complete" || last["taskId"] != id {
			t.Fatalf("tasks/get: %v", last)
		}
		if last["status"] != "working" {
			break
		}
		if polls > 50 {
			t.Fatal("the task never ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
	updated, _ := time.Parse(time.RFC3339, last["lastUpdatedAt"].(string))
	if last["status"] != "completed" || text(t, last["result"].(map[string]any)) != "done" || updated.Sub(created) < dur {
		t.Fatalf("completed task: %v", last)
	}
	if s.TasksCreated() != 1 || s.TaskPolls() < 2 {
		t.Errorf("created %d polls %d", s.TasksCreated(), s.TaskPolls())
	}

	// Cancelled while working: terminal.
	id2 := call2026(t, url, "tools/call", slow, tasksExt).msg.Result["taskId"].(string)
	c := call2026(t, url, "tasks/cancel", map[string]any{"taskId": id2}, tasksExt)
	if c.msg.Error != nil || c.msg.Result["resultType"] != "complete" || len(c.msg.Result) != 2 { // resultType, _meta
		t.Fatalf("tasks/cancel: %s", c.raw)
	}
	time.Sleep(dur + 20*time.Millisecond)
	if st := get(id2).msg.Result["status"]; st != "cancelled" || s.TaskCancels() != 1 {
		t.Fatalf("cancelled task is %v (cancels %d)", st, s.TaskCancels())
	}
	if u := call2026(t, url, "tasks/update", map[string]any{"taskId": id2, "inputResponses": map[string]any{}}, tasksExt); u.msg.Error != nil || u.msg.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %s", u.raw)
	}

	wantError(t, get("nope"), http.StatusOK, -32602, "Task not found")
	wantError(t, call2026(t, url, "tasks/get", map[string]any{"taskId": id}, noCaps), http.StatusBadRequest, -32021, "tasks")
	// Mcp-Name mirrors the taskId.
	h := modernHeaders("tasks/get", map[string]any{"taskId": id})
	h["Mcp-Name"] = "other"
	wantError(t, post(t, url, h, modernBody(9, "tasks/get", map[string]any{"taskId": id}, tasksExt)), http.StatusBadRequest, -32020, "Mcp-Name")

	// Without the extension: synchronous.
	begin := time.Now()
	a = call2026(t, url, "tools/call", slow, noCaps)
	if a.msg.Result["resultType"] != "complete" || text(t, a.msg.Result) != "done" || time.Since(begin) < dur {
		t.Fatalf("synchronous slow_task after %v: %s", time.Since(begin), a.raw)
	}
	if s.TasksCreated() != 2 {
		t.Errorf("tasks created %d", s.TasksCreated())
	}

	// TaskFail: failed with the JSON-RPC error.
	_, furl := start(t, Options{DualEra: true, TaskDuration: time.Millisecond, TaskFail: true})
	fid := call2026(t, furl, "tools/call", slow, tasksExt).msg.Result["taskId"].(string)
	time.Sleep(5 * time.Millisecond)
	f := call2026(t, furl, "tasks/get", map[string]any{"taskId": fid}, tasksExt).msg.Result
	if f["status"] != "failed" || f["error"].(map[string]any)["code"] != float64(-32603) || f["error"].(map[string]any)["message"] != "task failed" {
		t.Fatalf("failed task: %v", f)
	}
	wantError(t, call2026(t, furl, "tools/call", slow, noCaps), http.StatusOK, -32603, "task failed")
}

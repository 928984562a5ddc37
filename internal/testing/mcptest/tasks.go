package mcptest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// The Tasks extension (SEP-2663, io.modelcontextprotocol/tasks): the tool
// slow_task answers a client that declares the extension on its request
// with a CreateTaskResult (resultType "task"), and the client polls
// tasks/get until the task is terminal; tasks/cancel cancels it,
// tasks/update acknowledges input (none is ever asked for). A task's
// status follows from the clock (it completes TaskDuration after its
// creation), so no goroutine runs behind a task.

const taskTTL = 60 * time.Second

// taskTime is RFC 3339 with milliseconds, so that the lastUpdatedAt of a
// task of 200ms differs from its createdAt.
const taskTime = "2006-01-02T15:04:05.000Z07:00"

type task struct {
	id        string
	created   time.Time
	cancelled time.Time // zero unless cancelled while working
}

// state is the task's status at now and when it last changed.
func (s *handWritten) state(t *task, now time.Time) (status string, updated time.Time) {
	end := t.created.Add(s.opts.TaskDuration)
	switch {
	case !t.cancelled.IsZero():
		return "cancelled", t.cancelled
	case now.Before(end):
		return "working", t.created
	case s.opts.TaskFail:
		return "failed", end
	}
	return "completed", end
}

// view is the task as results show it: the Task fields, and the result,
// error or message its terminal status carries (DetailedTask).
func (s *handWritten) view(t *task, now time.Time) map[string]any {
	status, updated := s.state(t, now)
	v := map[string]any{"taskId": t.id, "status": status,
		"createdAt": t.created.UTC().Format(taskTime), "lastUpdatedAt": updated.UTC().Format(taskTime),
		"ttlMs": taskTTL.Milliseconds(), "pollIntervalMs": s.opts.TaskPollInterval.Milliseconds()}
	switch status {
	case "completed":
		res := textResult("done")
		res["isError"] = false
		v["result"] = res
	case "failed":
		v["error"] = map[string]any{"code": codeInternal, "message": "task failed"}
		v["statusMessage"] = "task failed"
	case "cancelled":
		v["statusMessage"] = "cancelled by tasks/cancel"
	}
	return v
}

// slowTask is the tool: a task when the request declares the extension,
// else the work done while the request waits.
func (s *handWritten) slowTask(c *call) (map[string]any, *rpcError) {
	if c.modern && c.caps.tasks() {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		now := time.Now()
		t := &task{id: hex.EncodeToString(b), created: now}
		s.mu.Lock()
		s.purgeTasks(now)
		s.tasks[t.id] = t // stored before it is announced: tasks/get finds it at once
		s.mu.Unlock()
		s.tasksCreated.Add(1)
		res := s.view(t, now)
		res["resultType"] = "task"
		return res, nil
	}
	timer := time.NewTimer(s.opts.TaskDuration)
	defer timer.Stop()
	select {
	case <-c.ctx.Done():
		return nil, &rpcError{Code: codeInternal, Message: "request cancelled"} // nobody reads it
	case <-s.closing:
		return nil, &rpcError{Code: codeInternal, Message: "server closing"}
	case <-timer.C:
	}
	if s.opts.TaskFail {
		return nil, &rpcError{Code: codeInternal, Message: "task failed"}
	}
	return textResult("done"), nil
}

// purgeTasks drops expired tasks, at most once a TTL (a load test may
// create many). s.mu is held.
func (s *handWritten) purgeTasks(now time.Time) {
	if now.Sub(s.lastPurge) < taskTTL {
		return
	}
	s.lastPurge = now
	for id, t := range s.tasks {
		if now.Sub(t.created) > taskTTL {
			delete(s.tasks, id)
		}
	}
}

// taskMethod answers tasks/get, tasks/update and tasks/cancel.
func (s *handWritten) taskMethod(c *call) (map[string]any, *rpcError) {
	if !c.caps.tasks() {
		return nil, &rpcError{Code: codeMissingCapabilities, Message: "Missing required client capability: the " + extTasks + " extension",
			Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}}}}
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(c.req.Params, &p)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[p.TaskID]
	switch {
	case t == nil:
		return nil, &rpcError{Code: codeInvalidParams, Message: "Failed to retrieve task: Task not found"}
	case now.Sub(t.created) > taskTTL:
		delete(s.tasks, t.id)
		return nil, &rpcError{Code: codeInvalidParams, Message: "Failed to retrieve task: Task has expired"}
	}
	switch c.req.Method {
	case "tasks/get":
		s.taskPolls.Add(1)
		return s.view(t, now), nil // resultType complete: the standard result of tasks/get
	case "tasks/cancel":
		// Cooperative: a task already terminal stays as it ended.
		if status, _ := s.state(t, now); status == "working" {
			t.cancelled = now
		}
		s.taskCancels.Add(1)
	}
	return map[string]any{}, nil // tasks/update, tasks/cancel: an empty acknowledgement
}

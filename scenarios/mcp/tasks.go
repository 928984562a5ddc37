package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Task statuses (SEP-2663).
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// taskState is what the client reads of a Task (a CreateTaskResult or a
// tasks/get result).
type taskState struct {
	id, status string
	poll       time.Duration
}

// parseTask reads a task's id, status and poll interval from res; an
// answer that suggests no interval keeps poll, the last one suggested.
func (s *Session) parseTask(op string, res []byte, poll time.Duration) (taskState, error) {
	r := gjson.ParseBytes(res)
	t := taskState{id: r.Get("taskId").String(), status: r.Get("status").String(), poll: poll}
	if ms := r.Get("pollIntervalMs"); ms.Type == gjson.Number {
		t.poll = min(max(time.Duration(ms.Float()*float64(time.Millisecond)), minPollInterval), maxPollInterval)
	}
	switch t.status {
	case taskWorking, taskInputRequired, taskCompleted, taskFailed, taskCancelled:
	default:
		return t, &Error{Kind: KindProtocol, Op: op, Msg: s.redact(fmt.Sprintf("unknown task status %q; the server answered %s", textutil.Truncate(t.status, 32), snippet(res)))}
	}
	if r.Get("taskId").Type != gjson.String || t.id == "" {
		return t, &Error{Kind: KindProtocol, Op: op, Msg: s.redact("the task has no taskId; the server answered " + snippet(res))}
	}
	return t, nil
}

// followTask follows the task op's request created (its CreateTaskResult)
// to its end: tasks/get at the server's poll interval, tasks/update with
// the step's inputs when the task asks for input, tasks/cancel when the
// step gives up. A completed task's result goes into out, as the result
// of the request would have; a failed one is the JSON-RPC error it ended
// with.
func (s *Session) followTask(ctx context.Context, op string, created []byte, o *RequestOptions, out any) error {
	t, err := s.parseTask(op, created, defaultPollInterval)
	if err != nil {
		return err
	}
	s.observed(SubRequest{Task: TaskCreated})
	ended := false
	end := func(how string) { ended = true; s.observed(SubRequest{Task: how}) }
	// However the step ends — a poll that failed or made no sense, an
	// update the inputs could not give, the run stopping — a task no
	// longer followed is given up.
	defer func() {
		if !ended {
			end(TaskGivenUp)
		}
	}()
	id := t.id
	timeout := o.Task.Timeout
	if timeout <= 0 {
		timeout = DefaultTaskTimeout
	}
	// The step gives up at the first of its limits: cancelAfter
	// (aborted) or the task's timeout.
	start := time.Now()
	limit, cancelled := start.Add(timeout), false
	if c := o.Task.CancelAfter; c > 0 && c < timeout {
		limit, cancelled = start.Add(c), true
	}
	answered := map[string]bool{} // inputRequests keys already answered
	res := created
	for {
		switch t.status {
		case taskCompleted:
			end(TaskCompleted)
			result := gjson.GetBytes(res, "result")
			if !result.IsObject() {
				return &Error{Kind: KindProtocol, Op: op, Msg: s.redact("a completed task carries no result object; the server answered " + snippet(res))}
			}
			if s.keep || s.rawOnce {
				s.last = []byte(result.Raw)
			}
			if out != nil {
				if err := unmarshalResult([]byte(result.Raw), out); err != nil {
					return &Error{Kind: KindProtocol, Op: op, Msg: s.redact("malformed task result: " + jsonErrMsg(err))}
				}
			}
			return nil
		case taskFailed:
			end(TaskFailed)
			e := gjson.GetBytes(res, "error")
			return &Error{Kind: KindJSONRPC, Op: op, Code: e.Get("code").Int(),
				Msg: s.redact("task failed: " + textutil.Truncate(e.Get("message").String(), 200))}
		case taskCancelled:
			end(TaskCancelled)
			return &Error{Kind: KindTool, Op: op, Msg: "the server cancelled the task"}
		case taskInputRequired:
			if err := s.updateTask(ctx, id, res, o.Inputs, answered); err != nil {
				return err
			}
		}
		if !sleepCtx(ctx, min(t.poll, time.Until(limit))) {
			return &Error{Kind: KindCanceled, Op: op, Err: context.Cause(ctx)}
		}
		if !time.Now().Before(limit) {
			s.cancelTask(ctx, id)
			if cancelled {
				return &Error{Kind: KindAborted, Op: op, Err: errAborted, Msg: fmt.Sprintf("task cancelled after %s (cancelAfter)", o.Task.CancelAfter)}
			}
			return &Error{Kind: KindTimeout, Op: op, Err: errRequestTimeout, Msg: fmt.Sprintf("the task did not end within %s", timeout)}
		}
		if res, err = s.taskCall(ctx, MethodTasksGet, id, nil); err != nil {
			return err
		}
		next, err := s.parseTask(MethodTasksGet, res, t.poll)
		if err != nil {
			return err
		}
		if next.id != id {
			return &Error{Kind: KindProtocol, Op: MethodTasksGet, Msg: s.redact(fmt.Sprintf("tasks/get for %q answered task %q", textutil.Truncate(id, 64), textutil.Truncate(next.id, 64)))}
		}
		t = next
	}
}

// taskCall sends one of the Tasks methods about task id (with extra
// members for params, raw JSON after the taskId) and returns its result;
// the observer hears of it.
func (s *Session) taskCall(ctx context.Context, method, id string, extra []byte) ([]byte, error) {
	params := textutil.AppendJSONString([]byte(`{"taskId":`), id)
	if extra != nil {
		params = append(append(params, ','), extra...)
	}
	params = append(params, '}')
	var raw json.RawMessage
	start := time.Now()
	// SEP-2663: the Mcp-Name of a task's requests is its taskId, so that
	// a load balancer can route them to the instance holding the task.
	_, err := s.call(ctx, method, id, params, &raw)
	s.observed(SubRequest{Method: method, Start: start, Err: err})
	return raw, err
}

// updateTask answers, with tasks/update, the input requests of task id
// (res, an input_required task) that are not answered yet.
func (s *Session) updateTask(ctx context.Context, id string, res []byte, in Inputs, answered map[string]bool) error {
	reqs := gjson.GetBytes(res, "inputRequests")
	if !reqs.IsObject() {
		return nil // nothing to answer yet: poll on
	}
	pending := map[string]json.RawMessage{}
	reqs.ForEach(func(k, v gjson.Result) bool {
		if !answered[k.String()] {
			pending[k.String()] = json.RawMessage(v.Raw)
		}
		return true
	})
	if len(pending) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"inputRequests": pending})
	responses, err := s.inputResponses(MethodTasksGet, gjson.GetBytes(b, "inputRequests"), res, in)
	if err != nil {
		return err
	}
	if _, err := s.taskCall(ctx, MethodTasksUpdate, id, append([]byte(`"inputResponses":`), responses...)); err != nil {
		return err
	}
	for k := range pending {
		answered[k] = true
	}
	return nil
}

// cancelTask sends tasks/cancel for task id; its answer does not change
// how the step ends (cancellation is cooperative).
func (s *Session) cancelTask(ctx context.Context, id string) {
	_, _ = s.taskCall(context.WithoutCancel(ctx), MethodTasksCancel, id, nil)
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

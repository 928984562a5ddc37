package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// MCP 2026-07-28 lets a request take more than one round trip:
//   - multi round-trip requests (MRTR, SEP-2322): a tools/call, prompts/get
//     or resources/read answered with resultType input_required is sent
//     again with inputResponses (answers to the server's inputRequests)
//     and the server's requestState echoed;
//   - the Tasks extension (SEP-2663): a tools/call answered with
//     resultType task is polled with tasks/get, at the server's
//     pollIntervalMs, until the task ends (or is cancelled with
//     tasks/cancel).
// A step opts in with RequestOptions (its inputs: and task:), which
// declare the matching capabilities on its requests; the caller's time
// for the step is the whole exchange, end to end, and an Observer hears
// of each extra round trip.

// Inputs answer a server's input requests: by the server's key in
// inputRequests first, else by the request's method (elicitation/create,
// sampling/createMessage, roots/list). Each value is the JSON result the
// client gives for that request (an ElicitResult, a CreateMessageResult,
// a ListRootsResult).
type Inputs map[string]json.RawMessage

// TaskOptions make a tools/call run as a task when the server offers one.
type TaskOptions struct {
	// CancelAfter sends tasks/cancel this long after the task was created
	// and gives up on it, counted as KindAborted (0: never).
	CancelAfter time.Duration
	// Timeout bounds the whole task, polls included (0:
	// DefaultTaskTimeout); when it fires the task is cancelled and the
	// call fails with KindTimeout.
	Timeout time.Duration
}

// Task defaults and bounds.
const (
	DefaultTaskTimeout = 10 * time.Minute
	// defaultPollInterval is used when the server suggests none; the
	// server's own is honoured but kept within [minPollInterval,
	// maxPollInterval] so that a broken value cannot spin or stall.
	defaultPollInterval = time.Second
	minPollInterval     = 10 * time.Millisecond
	maxPollInterval     = time.Minute
	// maxInputRounds bounds how often one request is sent again to
	// answer input_required: a server may ask again, but not forever.
	maxInputRounds = 8
)

// RequestOptions are what a step adds to its request (see Session.Next).
type RequestOptions struct {
	Inputs Inputs       // answers to input_required (nil: the step answers none)
	Task   *TaskOptions // run a tools/call as a task (nil: declare no Tasks)
}

// SubRequest is one extra round trip of a step: a retry answering
// input_required (Method is the step's own, Retry true), or a task's
// tasks/get, tasks/update or tasks/cancel. A task's life is told too,
// with no Method: Task is TaskCreated when it was created, then how it
// ended (TaskCompleted, TaskFailed, TaskCancelled, TaskGivenUp).
type SubRequest struct {
	Method string
	Retry  bool
	Start  time.Time
	Err    error // nil: answered
	Task   string
}

// What a task did (SubRequest.Task).
const (
	TaskCreated   = "created"
	TaskCompleted = taskCompleted
	TaskFailed    = taskFailed
	TaskCancelled = taskCancelled // by the server
	TaskGivenUp   = "given_up"    // cancelled by the step, past its timeout, or left after a failed poll
)

// The Tasks extension's methods; each is also the Op of its errors.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
)

// Result types other than complete a request may take (Session.accept).
const (
	acceptInputs = 1 << iota
	acceptTask
)

// sessionExtras is what only sessions using the 2026-07-28 features
// keep.
type sessionExtras struct {
	next        *RequestOptions
	observe     func(SubRequest)
	pending     []byte // an input_required or task result (call)
	pendingType string
	cache       listCache // cache.go
	cached      bool      // the last list or read was served from the cache
}

func (s *Session) ext() *sessionExtras {
	if s.x == nil {
		s.x = &sessionExtras{}
	}
	return s.x
}

// Next sets what the next tools/call, prompts/get or resources/read adds
// (nil: nothing). It applies to that request only, and only in the
// 2026-07-28 era: a 2025 session has no input_required results or tasks.
func (s *Session) Next(o *RequestOptions) {
	if o != nil || s.x != nil {
		s.ext().next = o
	}
}

// Observe makes f hear of each extra round trip of the session's steps
// (nil: none).
func (s *Session) Observe(f func(SubRequest)) { s.ext().observe = f }

// request sends op and follows it through input_required retries and a
// task, as the options set with Next allow; out gets the final result.
func (s *Session) request(ctx context.Context, op, name string, params []byte, out any) error {
	var o *RequestOptions
	if s.x != nil {
		o, s.x.next = s.x.next, nil
	}
	if o == nil || s.era != Era2026 {
		_, err := s.call(ctx, op, name, params, out)
		return err
	}
	variant, accept := 0, uint8(0)
	if o.Inputs != nil {
		variant, accept = variant|metaInputs, accept|acceptInputs
	}
	if o.Task != nil && op == methodCallTool {
		variant, accept = variant|metaTasks, accept|acceptTask
	}
	meta := s.meta
	s.meta, s.accept = s.c.meta[variant], accept
	defer func() { s.meta, s.accept = meta, 0 }()
	sent := params
	for round := 0; ; round++ {
		start := time.Now()
		_, err := s.call(ctx, op, name, sent, out)
		if round > 0 {
			s.noCache() // its result depends on the inputs sent
			s.observed(SubRequest{Method: op, Retry: true, Start: start, Err: err})
		}
		if err != nil {
			return err
		}
		switch s.x.pendingType {
		case "":
			return nil
		case resultTask:
			s.accept = 0
			return s.followTask(ctx, op, s.x.pending, o, out)
		}
		if round == maxInputRounds {
			return &Error{Kind: KindProtocol, Op: op, Msg: fmt.Sprintf("the server still asks for input after %d answers; it last answered %s",
				maxInputRounds, s.redact(snippet(s.x.pending)))}
		}
		if sent, err = s.retryParams(op, params, s.x.pending, o.Inputs); err != nil {
			return err
		}
	}
}

// observed tells the observer, if any, of an extra round trip.
func (s *Session) observed(r SubRequest) {
	if s.x != nil && s.x.observe != nil {
		s.x.observe(r)
	}
}

// retryParams builds the params of the retry of a request (params, an
// object) answered with the input_required result res: the same params
// with inputResponses — the step's answer to each of the server's
// inputRequests — and the server's requestState, echoed as it came.
func (s *Session) retryParams(op string, params, res []byte, in Inputs) ([]byte, error) {
	responses, err := s.inputResponses(op, gjson.GetBytes(res, "inputRequests"), res, in)
	if err != nil {
		return nil, err
	}
	state := gjson.GetBytes(res, "requestState")
	if responses == nil && !state.Exists() {
		return nil, &Error{Kind: KindProtocol, Op: op, Msg: s.redact("an input_required result must carry inputRequests or requestState; the server answered " + snippet(res))}
	}
	if state.Exists() && state.Type != gjson.String {
		return nil, &Error{Kind: KindProtocol, Op: op, Msg: s.redact("requestState is not a string; the server answered " + snippet(res))}
	}
	p := make([]byte, 0, len(params)+len(responses)+len(state.Raw)+48)
	p = append(p, '{')
	if len(params) > 1 {
		if rest := params[1 : len(params)-1]; len(rest) > 0 && !isEmptyObjectTail(params[1:]) {
			p = append(p, rest...)
			p = append(p, ',')
		}
	}
	if responses != nil {
		p = append(p, `"inputResponses":`...)
		p = append(p, responses...)
		p = append(p, ',')
	}
	if state.Exists() {
		p = append(p, `"requestState":`...)
		p = append(p, state.Raw...) // the server's own JSON string, byte for byte
		p = append(p, ',')
	}
	p[len(p)-1] = '}'
	return p, nil
}

// inputResponses answers the server's inputRequests from the step's
// inputs: an object of the same keys, or nil when the server asked for
// nothing. A request the inputs do not answer is an error that names it.
func (s *Session) inputResponses(op string, reqs gjson.Result, res []byte, in Inputs) ([]byte, error) {
	if !reqs.Exists() || reqs.Type == gjson.Null {
		return nil, nil
	}
	if !reqs.IsObject() {
		return nil, &Error{Kind: KindProtocol, Op: op, Msg: s.redact("inputRequests is not an object; the server answered " + snippet(res))}
	}
	out := []byte{'{'}
	var missing string
	reqs.ForEach(func(key, req gjson.Result) bool {
		method := req.Get("method").String()
		answer, ok := in[key.String()]
		if !ok {
			answer, ok = in[method]
		}
		if !ok {
			missing = fmt.Sprintf("the server asks for input %q (%s), which the step's inputs: do not answer (by that key or by its method)",
				textutil.Truncate(key.String(), 64), textutil.Truncate(method, 64))
			return false
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, key.Raw...)
		out = append(out, ':')
		out = append(out, answer...)
		return true
	})
	if missing != "" {
		return nil, &Error{Kind: KindProtocol, Op: op, Msg: s.redact(missing + "; the server answered " + snippet(res))}
	}
	return append(out, '}'), nil
}

package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Tasks extension (SEP-2663, io.modelcontextprotocol/tasks), served in
// the 2026-07-28 era. go-sdk v1.8.0 does not implement it, so the gateway
// does, inside go-sdk rather than in front of it: tasks/get, tasks/cancel
// and tasks/update are registered as custom methods, so that go-sdk's
// transport checks them as it checks every request (Mcp-Method, the _meta
// protocol version, the JSON-RPC shape) and every MCP middleware (metrics,
// trace comments) sees them; taskMiddleware answers them, because it has
// what a custom method's handler is not given — the request's token scope
// and headers.
//
// Only wait_for_run runs as a task: it is the long wait the held-while-
// waiting variant is about, and this is its Tasks-era form. A tools/call of
// it whose _meta declares the extension (in
// io.modelcontextprotocol/clientCapabilities.extensions) is validated by
// the tool as usual and answered with a CreateTaskResult instead of its
// result; a request that does not declare it gets the synchronous wait, as
// the spec requires. The run's status is read on every tasks/get — not in
// the background — with the same token-scoped query wait_for_run's polling
// loop runs, and the task completes (status "completed", result: the
// CallToolResult wait_for_run would have returned, isError included) when
// the run is done, when max_wait_seconds has passed since the task was
// created (status "running" in the result, as the loop), or when a poll
// fails. Status "failed" is never used: wait_for_run's errors are tool
// results, not JSON-RPC errors. tasks/cancel ends a working task
// (cancelled); tasks/update is acknowledged (wait_for_run asks for no
// input). A task lives Config.TaskTTL (ttlMs) from its creation, and is
// then discarded: tasks/get no longer knows it. pollIntervalMs is
// Config.PollInterval, the loop's interval.
//
// A task belongs to the user whose token created it: tasks/* from another
// token is answered as for an unknown task, so task ids cannot be probed
// (they are unguessable anyway: 130 random bits). tasks/* must carry the
// task id in its Mcp-Name header (SEP-2663, "Routing Headers").
//
// How a task's status checks use the pool is what the variants change
// (taskpoll.go): fixed takes a connection per check and gives it back at
// once; held-while-polling keeps one from the task's creation to its end.

const (
	tasksExtension = "io.modelcontextprotocol/tasks"

	methodTasksGet    = "tasks/get"
	methodTasksCancel = "tasks/cancel"
	methodTasksUpdate = "tasks/update"

	taskWorking   = "working"
	taskCompleted = "completed"
	taskCancelled = "cancelled"
	// taskExpired is no status of the spec's: a task working when its TTL
	// passed is discarded, and counted as this on /metrics.
	taskExpired = "expired"
)

// taskParams are the params of tasks/get, tasks/cancel and tasks/update.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
	// InputResponses (tasks/update) are accepted and ignored: wait_for_run
	// never asks for input.
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// taskResult is a Task on the wire: a CreateTaskResult (resultType
// "task") or a tasks/get result (resultType "complete").
type taskResult struct {
	mcp.ResultBase
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          int64               `json:"ttlMs"`
	PollIntervalMs int64               `json:"pollIntervalMs"`
	Result         *mcp.CallToolResult `json:"result,omitempty"`
}

// taskAck is the empty acknowledgement of tasks/cancel and tasks/update.
type taskAck struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// waitTask is one wait_for_run running as a task.
type waitTask struct {
	id      string
	email   string // the owner: only their token sees the task
	runID   int64
	maxWait time.Duration
	created time.Time

	mu      sync.Mutex // one status check, cancel or expiry at a time
	status  string
	message string
	updated time.Time
	polls   int
	result  *mcp.CallToolResult
	// held is the connection the held-while-polling variant keeps for the
	// task's whole life (taskpoll.go); nil otherwise, and once released.
	held   *Session
	expiry *time.Timer
}

// taskStore holds the gateway's tasks, in memory (the gateway is one
// process; no task outlives it), and counts them for /metrics.
type taskStore struct {
	ttl, pollInterval time.Duration

	mu     sync.Mutex
	tasks  map[string]*waitTask
	closed bool

	created, completed, cancelled, expired atomic.Int64
	open, held                             atomic.Int64 // working tasks; connections tasks hold
}

// ended counts a stored task that reached status.
func (s *taskStore) ended(status string) {
	switch status {
	case taskCompleted:
		s.completed.Add(1)
	case taskCancelled:
		s.cancelled.Add(1)
	case taskExpired:
		s.expired.Add(1)
	}
}

func newTaskStore(ttl, pollInterval time.Duration) *taskStore {
	return &taskStore{ttl: ttl, pollInterval: pollInterval, tasks: map[string]*waitTask{}}
}

// errUnknownTask answers tasks/* for a task that does not exist, has
// expired, or is another user's: the three are not told apart.
var errUnknownTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task"}

var errGatewayClosing = errors.New("the gateway is shutting down")

// taskSlot carries a task out of wait_for_run's handler: taskMiddleware
// puts one in the context of a tools/call that may become a task, and the
// handler, once it has validated the call, fills it instead of waiting.
type taskSlot struct{ task *waitTask }

type taskSlotKey struct{}

func taskSlotFrom(ctx context.Context) *taskSlot {
	s, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return s
}

// addTaskMethods registers the Tasks methods with go-sdk, which then routes
// and checks them; taskMiddleware answers them before this handler would.
func addTaskMethods(s *mcp.Server) {
	unreachable := func(context.Context, *mcp.ServerSession, *taskParams) (*taskResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tasks: not answered by the task middleware"}
	}
	for _, m := range []string{methodTasksGet, methodTasksCancel, methodTasksUpdate} {
		if err := mcp.AddReceivingCustomMethod(s, m, unreachable); err != nil {
			panic(err) // only a standard method's name is refused
		}
	}
}

// taskMiddleware is the Tasks extension in go-sdk's method chain:
// server/discover advertises it, a tools/call of wait_for_run that
// declares it becomes a task, and tasks/* are answered.
func (g *Gateway) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "server/discover":
			res, err := next(ctx, method, req)
			if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil {
				d.Capabilities.AddExtension(tasksExtension, nil) // a copy: go-sdk clones its capabilities per answer
			}
			return res, err
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || r.Params == nil || r.Params.Name != waitForRunTool || !declaresTasks(r) {
				return next(ctx, method, req)
			}
			slot := &taskSlot{}
			res, err := next(context.WithValue(ctx, taskSlotKey{}, slot), method, req)
			if err != nil || slot.task == nil {
				return res, err // invalid arguments, no run, a failed first check: the tool's own answer
			}
			return g.taskView(slot.task, "task"), nil
		case methodTasksGet, methodTasksCancel, methodTasksUpdate:
			return g.serveTaskMethod(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// declaresTasks reports whether a 2026-07-28 request declares the Tasks
// extension in its own per-request capabilities — only those, "regardless
// of prior declarations" (SEP-2663).
func declaresTasks(r *mcp.CallToolRequest) bool {
	if r.ProtocolVersion() < modernVersion {
		return false // not defined in the 2025 era
	}
	return metaDeclaresTasks(r.Params.GetMeta())
}

// metaDeclaresTasks reports whether a request's _meta declares the Tasks
// extension among its client capabilities.
func metaDeclaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[tasksExtension].(map[string]any)
	return ok
}

// errTasksUndeclared answers a Tasks method from a request that does not
// declare the extension: SEP-2663 has the server refuse it with
// Missing Required Client Capability, naming the extension.
var errTasksUndeclared = &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
	Message: "the Tasks extension (" + tasksExtension + ") is not declared in this request's clientCapabilities",
	Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`)}

// serveTaskMethod answers tasks/get, tasks/cancel and tasks/update.
func (g *Gateway) serveTaskMethod(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	if v, ok := req.(interface{ ProtocolVersion() string }); !ok || v.ProtocolVersion() < modernVersion {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("%s: the Tasks extension is served in protocol %s and later", method, modernVersion)}
	}
	p, _ := req.GetParams().(*taskParams)
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + ": taskId is required"}
	}
	if !metaDeclaresTasks(p.GetMeta()) {
		return nil, errTasksUndeclared
	}
	// go-sdk checks Mcp-Name only for the methods it knows; SEP-2663 says
	// the task id goes there, for intermediaries routing by task.
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		if got := extra.Header.Get("Mcp-Name"); got != p.TaskID {
			return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
				Message: fmt.Sprintf("%s: the Mcp-Name header must be the taskId (got %q)", method, got)}
		}
	}
	sc, err := scopeOf(req)
	if err != nil {
		return nil, err
	}
	t := g.tasks.lookup(p.TaskID, sc.Email)
	if t == nil {
		return nil, errUnknownTask
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch method {
	case methodTasksGet:
		if t.status == taskWorking {
			ctx, cancel := g.bound(ctx)
			defer cancel()
			if err := g.checkTask(ctx, t, sc); err != nil {
				return nil, err // the poll's own client is gone: the task carries on
			}
		}
		return g.taskViewLocked(t, "complete"), nil
	case methodTasksCancel:
		g.cancelTask(t)
	}
	return &taskAck{ResultType: "complete"}, nil
}

// createWaitTask creates the task for wait_for_run(id, maxWait), its first
// status check done (as the loop's first poll is at once): a check that
// fails is the tool's error, and no task is created. A run already done
// makes a task already completed.
func (g *Gateway) createWaitTask(ctx context.Context, sc *Scope, id int64, maxWait time.Duration) (*waitTask, error) {
	tid := rand.Text()
	now := time.Now()
	t := &waitTask{id: tid, email: sc.Email, runID: id, maxWait: maxWait, created: now, updated: now,
		status: taskWorking, message: fmt.Sprintf("waiting for run %d", id)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := g.openTask(ctx, t); err != nil {
		return nil, fmt.Errorf("poll run %d: %w", id, err)
	}
	if err := g.checkTask(ctx, t, sc); err != nil {
		g.releaseTask(t)
		return nil, err
	}
	if t.status == taskCompleted && t.result.IsError {
		// Nothing to poll for: the tool's error, answered as the tool does.
		g.releaseTask(t)
		return nil, t.result.GetError()
	}
	if err := g.tasks.add(t, func() { g.expireTask(t) }); err != nil {
		g.releaseTask(t)
		return nil, err
	}
	return t, nil
}

// checkTask reads the run's status once (checkRun, taskpoll.go) and moves
// the task on: completed when the run is done, when max_wait_seconds has
// passed, or when the check failed — unless it failed because ctx ended
// (the poll's client went away): then the error is returned and the task
// stays as it was. Called with t.mu held, on a working task.
func (g *Gateway) checkTask(ctx context.Context, t *waitTask, sc *Scope) error {
	done, err := g.checkRun(ctx, t, sc)
	t.polls++
	waited := time.Since(t.created)
	out := waitRunOut{RunID: t.runID, Status: "running", WaitedSeconds: waited.Seconds(), Polls: t.polls}
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("poll run %d: %w", t.runID, ctx.Err())
	case err != nil:
		g.finishTask(t, toolResult(nil, fmt.Errorf("poll run %d: %w", t.runID, err)))
	case done:
		out.Status = "done"
		g.finishTask(t, toolResult(out, nil))
	case waited >= t.maxWait:
		g.finishTask(t, toolResult(out, nil))
	}
	return nil
}

// finishTask completes a working task with res.
func (g *Gateway) finishTask(t *waitTask, res *mcp.CallToolResult) {
	g.endTask(t, taskCompleted, "")
	t.result = res
	g.releaseOnCompletion(t)
}

// endTask moves a working task to a terminal status. Only stored tasks
// are counted (open, then ended); one that ends before it is stored is
// counted when it is (add).
func (g *Gateway) endTask(t *waitTask, status, message string) {
	if t.expiry != nil {
		g.tasks.open.Add(-1)
		g.tasks.ended(status)
	}
	t.status, t.message, t.updated = status, message, time.Now()
}

// expireTask discards a task whose TTL has passed, releasing whatever it
// still holds; a task still working counts as expired.
func (g *Gateway) expireTask(t *waitTask) {
	g.tasks.remove(t.id)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == taskWorking {
		g.endTask(t, taskExpired, "")
	}
	g.releaseTask(t)
}

// closeTasks discards every task and releases what they hold, before the
// pool closes (which waits for connections still checked out).
func (g *Gateway) closeTasks() {
	for _, t := range g.tasks.drain() {
		t.expiry.Stop()
		t.mu.Lock()
		g.releaseTask(t)
		t.mu.Unlock()
	}
}

// taskView is t on the wire, as resultType says.
func (g *Gateway) taskView(t *waitTask, resultType string) *taskResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	return g.taskViewLocked(t, resultType)
}

func (g *Gateway) taskViewLocked(t *waitTask, resultType string) *taskResult {
	res := &taskResult{ResultType: resultType, TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: taskTime(t.created), LastUpdatedAt: taskTime(t.updated),
		TTLMs: g.tasks.ttl.Milliseconds(), PollIntervalMs: g.tasks.pollInterval.Milliseconds()}
	if t.status == taskCompleted {
		res.Result = t.result
	}
	return res
}

// taskTime is an ISO 8601 timestamp, UTC, to the millisecond.
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// toolResult is the CallToolResult go-sdk makes of a typed tool handler's
// answer: the output as structured content and its JSON as text, or the
// error as text with isError.
func toolResult(out any, err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	if err != nil {
		res.SetError(err)
		return res
	}
	b, _ := json.Marshal(out) // waitRunOut always marshals
	res.StructuredContent = json.RawMessage(b)
	res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	return res
}

// add stores t and arms its expiry; a working task counts as open.
func (s *taskStore) add(t *waitTask, expire func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errGatewayClosing
	}
	s.tasks[t.id] = t
	s.created.Add(1)
	if t.status == taskWorking {
		s.open.Add(1)
	} else {
		s.ended(t.status)
	}
	t.expiry = time.AfterFunc(s.ttl, expire)
	return nil
}

// lookup finds task id if it belongs to email.
func (s *taskStore) lookup(id, email string) *waitTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tasks[id]; t != nil && t.email == email {
		return t
	}
	return nil
}

func (s *taskStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tasks, id)
}

// drain empties the store for good and returns what it held.
func (s *taskStore) drain() []*waitTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]*waitTask, 0, len(s.tasks))
	for id, t := range s.tasks {
		out = append(out, t)
		delete(s.tasks, id)
	}
	return out
}

package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Run queries. A run is done once finishes_at has passed; clock_timestamp,
// not now(), so that the answer does not depend on when the polling
// transaction began.
const (
	sqlStartRun = `INSERT INTO runs (user_email, name, finishes_at)
VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3)) RETURNING id, finishes_at`

	sqlRunStatus = `SELECT runs.finishes_at <= clock_timestamp(), runs.finishes_at FROM runs
WHERE runs.id = $1 AND runs.user_email = $2`

	sqlLatestRun = `SELECT runs.id FROM runs WHERE runs.user_email = $1 ORDER BY runs.id DESC LIMIT 1`
)

type startRunIn struct {
	Name string `json:"name,omitempty" jsonschema:"a label for the run (at most 200 characters)"`
}

type startRunOut struct {
	RunID      int64     `json:"run_id"`
	FinishesAt time.Time `json:"finishes_at"`
}

type waitRunIn struct {
	RunID          int64    `json:"run_id,omitempty" jsonschema:"the run_id start_run returned (default: the caller's latest run)"`
	MaxWaitSeconds *float64 `json:"max_wait_seconds,omitempty" jsonschema:"how long to wait for the run at most, 0 to 30 seconds (default 30)"`
}

type waitRunOut struct {
	RunID         int64   `json:"run_id"`
	Status        string  `json:"status"` // "done" or "running" (max_wait_seconds passed first)
	WaitedSeconds float64 `json:"waited_seconds"`
	Polls         int     `json:"polls"`
}

// addRunTools registers start_run and wait_for_run.
func (g *Gateway) addRunTools(s *mcp.Server, builtin map[string]bool) {
	addTool(s, builtin, &mcp.Tool{Name: "start_run", Description: "Start a long-running job for the caller; it finishes after the gateway's run delay. Returns its run_id."},
		func(ctx context.Context, req *mcp.CallToolRequest, in startRunIn) (*mcp.CallToolResult, startRunOut, error) {
			var out startRunOut
			sc, err := scopeOf(req)
			if err != nil {
				return nil, out, err
			}
			if len(in.Name) > 200 {
				return nil, out, fmt.Errorf("name is %d characters, at most 200 allowed", len(in.Name))
			}
			err = g.withSession(ctx, func(sess *Session) error {
				_, err := sess.QueryRow(ctx, sqlStartRun, []any{sc.Email, in.Name, g.cfg.RunDelay.Seconds()}, &out.RunID, &out.FinishesAt)
				return err
			})
			if err != nil {
				return nil, out, fmt.Errorf("start run: %w", err)
			}
			return nil, out, nil
		})

	addTool(s, builtin, &mcp.Tool{Name: waitForRunTool, Description: "Wait until a run started with start_run is done, polling it, for at most max_wait_seconds (default and limit 30). A 2026-07-28 client that declares the Tasks extension (io.modelcontextprotocol/tasks) gets a task instead, and polls it with tasks/get."},
		func(ctx context.Context, req *mcp.CallToolRequest, in waitRunIn) (*mcp.CallToolResult, waitRunOut, error) {
			sc, err := scopeOf(req)
			if err != nil {
				return nil, waitRunOut{}, err
			}
			maxWait := MaxWait
			if in.MaxWaitSeconds != nil {
				w := *in.MaxWaitSeconds
				if w < 0 || w > MaxWait.Seconds() {
					return nil, waitRunOut{}, fmt.Errorf("max_wait_seconds must be between 0 and %g, got %g", MaxWait.Seconds(), w)
				}
				maxWait = time.Duration(w * float64(time.Second))
			}
			id := in.RunID
			if id == 0 {
				// Without a run_id, "the caller's latest run": for clients
				// that do not carry start_run's answer into the next call.
				// leakbench's scenarios capture it (capture: {run:
				// structuredContent.run_id}) and pass run_id.
				if id, err = g.latestRun(ctx, sc); err != nil {
					return nil, waitRunOut{}, err
				}
			}
			if slot := taskSlotFrom(ctx); slot != nil {
				// The client declared the Tasks extension on this request
				// (tasks.go): the same wait, as a task its tasks/get polls
				// drive. The result returned here is replaced by the task.
				slot.task, err = g.createWaitTask(ctx, sc, id, maxWait)
				return nil, waitRunOut{}, err
			}
			out, err := g.waitForRun(ctx, sc, id, maxWait)
			return nil, out, err
		})
}

// waitForRunTool is the tool that runs as a task under the Tasks extension.
const waitForRunTool = "wait_for_run"

// waitForRun polls the run until it is done or maxWait has passed. Each
// poll takes a connection, reads, and gives it back before the sleep: no
// connection is held while nothing is being asked of the database. (In the
// held-while-waiting variant the request still holds its authentication
// connection all along — see scopeHeldForRequest — which is the bug.)
func (g *Gateway) waitForRun(ctx context.Context, sc *Scope, id int64, maxWait time.Duration) (waitRunOut, error) {
	out := waitRunOut{RunID: id, Status: "running"}
	ctx, cancel := g.bound(ctx)
	defer cancel()
	start := time.Now()
	for {
		done, err := g.runDone(ctx, sc, id)
		out.Polls++
		if err != nil {
			return out, fmt.Errorf("poll run %d: %w", id, err)
		}
		if done {
			out.Status = "done"
			out.WaitedSeconds = time.Since(start).Seconds()
			return out, nil
		}
		left := maxWait - time.Since(start)
		if left <= 0 {
			out.WaitedSeconds = time.Since(start).Seconds()
			return out, nil
		}
		t := time.NewTimer(min(g.cfg.PollInterval, left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return out, fmt.Errorf("wait for run %d: %w", id, ctx.Err())
		}
	}
}

// errRunNotFound is what a caller sees for a run that does not exist or is
// not theirs: the two are not told apart, so run ids cannot be probed.
type errRunNotFound int64

func (e errRunNotFound) Error() string { return fmt.Sprintf("run %d not found", int64(e)) }

// runDone reads the run's status in its own short session.
func (g *Gateway) runDone(ctx context.Context, sc *Scope, id int64) (bool, error) {
	var done bool
	err := g.withSession(ctx, func(sess *Session) error {
		var err error
		done, err = runStatus(ctx, sess, sc, id)
		return err
	})
	return done, err
}

// runStatus reads whether the caller's run id is done, on sess.
func runStatus(ctx context.Context, sess *Session, sc *Scope, id int64) (bool, error) {
	var done bool
	var finishes time.Time
	found, err := sess.QueryRow(ctx, sqlRunStatus, []any{id, sc.Email}, &done, &finishes)
	if err == nil && !found {
		return false, errRunNotFound(id)
	}
	return done, err
}

// errNoRunYet: wait_for_run without a run_id, from a caller with no run.
var errNoRunYet = errors.New("no run to wait for: start one with start_run (or give run_id)")

// latestRun finds the caller's most recent run, in its own short session.
func (g *Gateway) latestRun(ctx context.Context, sc *Scope) (int64, error) {
	var id int64
	err := g.withSession(ctx, func(sess *Session) error {
		found, err := sess.QueryRow(ctx, sqlLatestRun, []any{sc.Email}, &id)
		if err == nil && !found {
			return errNoRunYet
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("find the latest run: %w", err)
	}
	return id, nil
}

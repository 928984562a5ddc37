package gateway

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// How a task's status checks (tasks.go) use the pool, the held-while-
// polling bug next to its fix.
//
// Fixed: every check — the one at creation, then one per tasks/get —
// takes a pooled connection, reads the run, and gives it back before the
// answer is written (runDone), as wait_for_run's loop does between its
// sleeps. Between polls a task holds nothing, so cancelling it or never
// polling it again costs no connection.
//
// held-while-polling: an MCP server that moved its long wait onto the
// Tasks extension by keeping the tool call's unit of work on the task
// object — a task-scoped session, checked out when the task is created,
// reused by every poll, and closed in the task's completion path. The
// connection stays checked out across the client's polls and the time
// between them; a task that is cancelled (the cancel handler only flips
// the status) or simply no longer polled (nothing drives it to completion)
// keeps it until its TTL discards the task. The session is in autocommit,
// so PostgreSQL sees a plain idle session, never one idle in transaction,
// while open tasks pin the pool: acquired = open tasks, and once they
// reach the pool's size every other request — new tasks, other tools, and
// the token scoping of the very polls that would complete the tasks —
// waits for the pool timeout and fails. Held-while-waiting's signature,
// from a protocol in which no request stays open.

// openTask readies t's first status check.
func (g *Gateway) openTask(ctx context.Context, t *waitTask) error {
	if !g.variants[VariantHeldWhilePolling] {
		return nil // fixed: each check takes its own connection
	}
	// BUG (held-while-polling): the connection the task's checks will use,
	// taken now and kept until the task completes.
	sess, err := g.store.NewAutocommitSession(ctx)
	if err != nil {
		return err
	}
	t.held = sess
	g.tasks.held.Add(1)
	return nil
}

// checkRun reads t's run once: on the task's connection when it keeps
// one (held-while-polling), else on a connection of its own, released at
// once (fixed).
func (g *Gateway) checkRun(ctx context.Context, t *waitTask, sc *Scope) (bool, error) {
	if t.held != nil {
		return runStatus(ctx, t.held, sc, t.runID)
	}
	return g.runDone(ctx, sc, t.runID)
}

// releaseOnCompletion is the completion path's cleanup, in both variants:
// whatever the task holds is given back.
func (g *Gateway) releaseOnCompletion(t *waitTask) { g.releaseTask(t) }

// cancelTask ends a working task (tasks/cancel); one already ended stays
// as it is.
func (g *Gateway) cancelTask(t *waitTask) {
	if t.status != taskWorking {
		return
	}
	g.endTask(t, taskCancelled, "cancelled by the client")
	if g.variants[VariantHeldWhilePolling] {
		// BUG (held-while-polling): the close lives on the completion path
		// only; a cancelled task keeps its connection until its TTL
		// discards it (expireTask).
		return
	}
	g.releaseTask(t) // fixed: every terminal path releases (between polls nothing is held anyway)
}

// releaseTask gives back the connection t holds, if any.
func (g *Gateway) releaseTask(t *waitTask) {
	if t.held == nil {
		return
	}
	t.held.Detach()
	t.held.Close()
	t.held = nil
	g.tasks.held.Add(-1)
}

// taskCollector exports the tasks, read at scrape time: how many are open,
// how they ended, and the pooled connections they hold between requests —
// held-while-polling's own gauge, beside the pool's (acquired = max, acquire
// waits and timeouts), which is what a probe sees of it.
type taskCollector struct {
	tasks                      *taskStore
	open, created, ended, held *prometheus.Desc
}

func newTaskCollector(s *taskStore) *taskCollector {
	return &taskCollector{
		tasks: s,
		open:  prometheus.NewDesc("mcp_gateway_tasks_open", "Tasks (wait_for_run under the Tasks extension) created and still working.", nil, nil),
		created: prometheus.NewDesc("mcp_gateway_tasks_created_total",
			"Tasks created (tools/call answered with a CreateTaskResult).", nil, nil),
		ended: prometheus.NewDesc("mcp_gateway_tasks_ended_total",
			"Tasks that ended, by status: completed, cancelled, or expired (discarded at their TTL while working).", []string{"status"}, nil),
		held: prometheus.NewDesc("mcp_gateway_db_pool_task_connections",
			"Pooled connections held by tasks between their requests (the held-while-polling leak; 0 when fixed).", nil, nil),
	}
}

func (c *taskCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.created, c.ended, c.held} {
		ch <- d
	}
}

func (c *taskCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.tasks
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.open.Load()))
	ch <- prometheus.MustNewConstMetric(c.created, prometheus.CounterValue, float64(s.created.Load()))
	ch <- prometheus.MustNewConstMetric(c.ended, prometheus.CounterValue, float64(s.completed.Load()), taskCompleted)
	ch <- prometheus.MustNewConstMetric(c.ended, prometheus.CounterValue, float64(s.cancelled.Load()), taskCancelled)
	ch <- prometheus.MustNewConstMetric(c.ended, prometheus.CounterValue, float64(s.expired.Load()), taskExpired)
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(s.held.Load()))
}

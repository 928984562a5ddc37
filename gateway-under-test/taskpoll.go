package gateway

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// How a task's status checks (tasks.go) use the pool: every check — the
// one at creation, then one per tasks/get — takes a pooled connection,
// reads the run, and gives it back before the answer is written (runDone),
// as wait_for_run's loop does between its sleeps. Between polls a task
// holds nothing, so cancelling it or never polling it again costs no
// connection.

// openTask readies t's first status check.
func (g *Gateway) openTask(ctx context.Context, t *waitTask) error {
	return nil // each check takes its own connection
}

// checkRun reads t's run once: on the task's connection when it keeps
// one, else on a connection of its own, released at once.
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
	g.releaseTask(t) // every terminal path releases (between polls nothing is held anyway)
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
// a gauge that stays 0 while no task keeps a connection between polls.
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
			"Pooled connections held by tasks between their requests (0: every status check releases its own).", nil, nil),
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

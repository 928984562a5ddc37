// Package table holds the figures of a run's report as rows: each a label
// and how its value reads from summary.json, so that the Markdown table,
// the HTML report and the terminal's table say the same thing in the same
// order (the ContextForge incident's: stuck connections, release latency,
// pool state, requests, error rate, latency).
//
//	for _, row := range table.For(before, after) {
//		fmt.Println(row.Label, row.Value(before), row.Value(after))
//	}
package table

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Row is one line of a run's table: its label, and its value read from
// the run's summary.json.
type Row struct {
	Label string
	Value func(*rundir.Summary) string
}

// Rows are the table's lines, in the incident's order.
var Rows = []Row{
	{"Stuck `idle in transaction` (max at one instant)", func(s *rundir.Summary) string {
		return probeInt(s, func(p *rundir.ProbeSummary) int { return p.MaxStuckIdleInTx })
	}},
	{"Stuck episodes (idle in transaction ≥ stuck threshold)", func(s *rundir.Summary) string {
		return probeInt(s, func(p *rundir.ProbeSummary) int { return p.StuckEpisodes })
	}},
	{"Killed by idle_in_transaction_session_timeout", func(s *rundir.Summary) string {
		return probeInt(s, func(p *rundir.ProbeSummary) int { return p.TimeoutTerminated })
	}},
	{"Longest hold", func(s *rundir.Summary) string {
		if s.Probe == nil {
			return "n/a"
		}
		return format.Seconds(s.Probe.LongestHoldSeconds)
	}},
	{"Connection release p50 / p99 / max", releaseRow},
	{"Pool state / worst wait", poolRow},
	{"Service connections (database view)", servicesRow},
	{"Requests", func(s *rundir.Summary) string {
		if s.Load == nil {
			return "n/a"
		}
		return fmt.Sprintf("%d (%.0f/s)", s.Load.Requests, rate(s.Load))
	}},
	{"Error rate", func(s *rundir.Summary) string {
		if s.Load == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", 100*s.Load.ErrorRate())
	}},
	{"Latency p95 / p99", func(s *rundir.Summary) string {
		if s.Load == nil {
			return "n/a"
		}
		all, ok := s.Load.Latency["all"]
		if !ok || all.Count == 0 {
			return "n/a"
		}
		return millis(all.P95Ms) + " / " + millis(all.P99Ms)
	}},
	{"Generator", generatorRow},
}

// releaseRow is the database's view of how long connections were held
// (idle-in-transaction spans), and beside it the service's own when its
// pool exports a use time (OpenTelemetry's db.client.connection.use_time):
// a service that holds connections long between statements shows a
// long use time and short spans; a leak shows both long.
func releaseRow(s *rundir.Summary) string {
	if s.Probe == nil {
		return "no episode seen"
	}
	out := "no episode seen"
	if s.Probe.Episodes > 0 {
		out = format.Seconds(s.Probe.ReleaseP50Seconds) + " / " + format.Seconds(s.Probe.ReleaseP99Seconds) + " / " + format.Seconds(s.Probe.ReleaseMaxSeconds)
	}
	if s.Probe.AppPoolUses > 0 {
		out += fmt.Sprintf("; service pool's view: held %s on average over %.0f checkouts", format.Seconds(s.Probe.AppPoolUseMeanSeconds), s.Probe.AppPoolUses)
		out += ", " + poolP95(s.Probe.AppPoolUseQuantiles)
	}
	return out
}

// poolP95 is the service pool's p95 use time, an estimate from its
// histogram's buckets, or that there is none.
func poolP95(q *rundir.PoolTimeQuantiles) string {
	switch {
	case q == nil:
		return "p95 not measured (its use time has no histogram buckets)"
	case q.P95.AtLeast:
		return fmt.Sprintf("p95 at least %s (beyond its use_time histogram's highest bucket)", format.Seconds(q.P95.Seconds))
	}
	return fmt.Sprintf("p95 ≈ %s (estimated within its use_time histogram's bucket of %s to %s)",
		format.Seconds(q.P95.Seconds), format.Seconds(q.P95.BucketLowSeconds), format.Seconds(q.P95.BucketHighSeconds))
}

// generatorRow is the load generator's self-check: "kept up: schedule
// late by p99 3.0 ms, 0.2 cores", or saturated and why — the latency rows
// above then include leakbench's own delay. A run recorded before the
// check existed says "not recorded", never a figure.
func generatorRow(s *rundir.Summary) string {
	if s.Load == nil {
		return "n/a"
	}
	return s.Load.Generator.Line()
}

func probeInt(s *rundir.Summary, f func(*rundir.ProbeSummary) int) string {
	if s.Probe == nil {
		return "n/a"
	}
	return fmt.Sprint(f(s.Probe))
}

// poolRow says whether a pool ran dry: exhausted (and why) or healthy,
// with the longest any client waited.
func poolRow(s *rundir.Summary) string {
	p := s.Pool
	if p == nil {
		if s.Probe == nil || !s.Probe.PgBouncerSampled {
			return "not sampled"
		}
		return fmt.Sprintf("%d clients waiting (max) / worst wait %s", s.Probe.PgBouncerMaxClWaiting, format.Seconds(s.Probe.PgBouncerMaxWaitSeconds))
	}
	if !p.PgBouncerSampled && !p.AppPoolSampled {
		switch {
		case p.JudgedFrom == "database view":
			return "exhausted, judged from the database's view — " + strings.TrimSuffix(p.Reason, " — judged from the database's view (no PgBouncer or pool metrics sampled)")
		case len(p.Services) > 0:
			return "no PgBouncer or pool metrics sampled; the database's view: not pinned"
		}
		return "not sampled"
	}
	state := "healthy"
	if p.Exhausted {
		state = "exhausted — " + p.Reason
	}
	if !p.PgBouncerSampled {
		return state
	}
	return state + " / worst wait " + format.Seconds(p.WorstWaitSeconds)
}

// servicesRow is the service's pool as the database saw it: the
// application with the most at stake (pinned longest, else the most
// connections), "max 10, pinned at 10 for 27.4 s, all idle in
// transaction".
func servicesRow(s *rundir.Summary) string {
	if s.Pool == nil || len(s.Pool.Services) == 0 {
		return "not sampled"
	}
	c := s.Pool.Services[0]
	name := c.Name
	if c.ByAddress {
		name += " (no application_name: grouped by client address)"
	}
	out := fmt.Sprintf("%s: max %d", name, c.Max)
	if c.Pinned {
		state := "none working"
		if c.PinnedAllIdleInTx {
			state = "all idle in transaction"
		}
		out += fmt.Sprintf(", pinned at %d for %s, %s", c.Max, format.Seconds(c.PinnedSeconds), state)
	} else {
		out += ", not pinned"
	}
	if n := len(s.Pool.Services) - 1; n > 0 {
		out += fmt.Sprintf("; %d other %s", n, map[bool]string{true: "application", false: "applications"}[n == 1])
	}
	return out
}

func rate(r *rundir.LoadResult) float64 {
	d := r.Ended.Sub(r.Started).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(r.Requests) / d
}

func millis(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

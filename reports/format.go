package reports

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// metricRow is one line of the incident-shaped table.
type metricRow struct {
	label string
	value func(*Summary) string
}

// tableRows are the table's lines, in the incident's order.
var tableRows = []metricRow{
	{"Stuck `idle in transaction` (max at one instant)", func(s *Summary) string { return probeInt(s, func(p *probes.Summary) int { return p.MaxStuckIdleInTx }) }},
	{"Stuck episodes (idle in transaction ≥ stuck threshold)", func(s *Summary) string { return probeInt(s, func(p *probes.Summary) int { return p.StuckEpisodes }) }},
	{"Killed by idle_in_transaction_session_timeout", func(s *Summary) string {
		return probeInt(s, func(p *probes.Summary) int { return p.TimeoutTerminated })
	}},
	{"Longest hold", func(s *Summary) string {
		if s.Probe == nil {
			return "n/a"
		}
		return seconds(s.Probe.LongestHoldSeconds)
	}},
	{"Connection release p50 / p99 / max", func(s *Summary) string {
		if s.Probe == nil || s.Probe.Episodes == 0 {
			return "no episode seen"
		}
		return seconds(s.Probe.ReleaseP50Seconds) + " / " + seconds(s.Probe.ReleaseP99Seconds) + " / " + seconds(s.Probe.ReleaseMaxSeconds)
	}},
	{"Pool state / worst wait", poolRow},
	{"Service connections (database view)", servicesRow},
	{"Requests", func(s *Summary) string {
		if s.Load == nil {
			return "n/a"
		}
		return fmt.Sprintf("%d (%.0f/s)", s.Load.Requests, rate(s.Load))
	}},
	{"Error rate", func(s *Summary) string {
		if s.Load == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", 100*s.Load.ErrorRate())
	}},
	{"Latency p95 / p99", func(s *Summary) string {
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

// generatorRow is the load generator's self-check: "kept up: schedule
// late by p99 3.0 ms, 0.2 cores", or saturated and why — the latency rows
// above then include leakbench's own delay. A run recorded before the
// check existed says "not recorded", never a figure.
func generatorRow(s *Summary) string {
	if s.Load == nil {
		return "n/a"
	}
	return s.Load.Generator.Line()
}

func probeInt(s *Summary, f func(*probes.Summary) int) string {
	if s.Probe == nil {
		return "n/a"
	}
	return fmt.Sprint(f(s.Probe))
}

// poolRow says whether a pool ran dry: exhausted (and why) or healthy,
// with the longest any client waited.
func poolRow(s *Summary) string {
	p := s.Pool
	if p == nil {
		if s.Probe == nil || !s.Probe.PgBouncerSampled {
			return "not sampled"
		}
		return fmt.Sprintf("%d clients waiting (max) / worst wait %s", s.Probe.PgBouncerMaxClWaiting, seconds(s.Probe.PgBouncerMaxWaitSeconds))
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
	return state + " / worst wait " + seconds(p.WorstWaitSeconds)
}

// servicesRow is the service's pool as the database saw it: the
// application with the most at stake (pinned longest, else the most
// connections), "max 10, pinned at 10 for 27.4 s, all idle in
// transaction".
func servicesRow(s *Summary) string {
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
		out += fmt.Sprintf(", pinned at %d for %s, %s", c.Max, seconds(c.PinnedSeconds), state)
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

// seconds is a duration in seconds as every part of a report writes it.
var seconds = format.Seconds

func millis(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// mdEscape makes text safe inside a Markdown table cell or inline code.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "`", "'")
	return strings.Join(strings.Fields(s), " ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// measure fills the stage's figures from its rendered run.
func measure(st *capreport.Stage, r *reports.Run, stage time.Duration) {
	sum := r.Summary
	if l := sum.Load; l != nil {
		st.Requests = l.Requests
		if judged := l.Requests - l.Aborted; judged > 0 {
			st.ErrorRate = float64(l.Failures) / float64(judged)
		}
		if all, ok := l.Latency[rundir.OpAll]; ok {
			st.P50Ms, st.P95Ms, st.P99Ms = all.P50Ms, all.P95Ms, all.P99Ms
		}
		if secs := l.Ended.Sub(l.Started).Seconds(); secs > 0 {
			st.Seconds = math.Round(secs*10) / 10
		}
		st.ReqPerSecond = float64(l.Requests) / stage.Seconds()
	}
	if pr := sum.Probe; pr != nil {
		st.Probed = true
		st.MaxStuck = pr.MaxStuckIdleInTx
	}
	if sz := sum.Sizing; sz != nil {
		st.Sizing, st.HoldSeconds, st.CeilingReqPerS = sz, sz.HoldSeconds, sz.CeilingReqPerS
	}
	if p := sum.Pool; p != nil {
		st.PgBouncerWait = p.PgBouncerMaxClWaiting
		st.AppPoolMax, st.AppPoolPeak = p.AppPoolMax, p.AppPoolMaxAcquired
		st.PoolExhausted, st.PoolPinned = p.Exhausted, p.Pinned
		for _, s := range p.Services {
			st.ServiceConns = max(st.ServiceConns, s.Max)
		}
	}
}

// judge sets the stage's verdict by the search's limits: the limits it
// broke, each timed by c (when in the stage it first tripped), earliest
// first. An error is a limit that cannot be judged (it matched no
// request): bad input, not a verdict.
func judge(st *capreport.Stage, s Spec, r *reports.Run, c *clock) error {
	sum := r.Summary
	resource := resourceBehind(sum)
	trip := func(limit, detail, res string, on onset) {
		st.Trips = append(st.Trips, capreport.Trip{Limit: limit, Detail: detail, Resource: res, AtSeconds: on.at, AtBasis: on.basis})
	}
	if p := sum.Pool; p != nil && sum.Probe != nil {
		if (s.Pool == PoolAny || s.Pool == PoolExhausted) && p.Exhausted {
			trip("pool exhausted", p.Reason, resource, c.exhausted())
		}
		if (s.Pool == PoolAny || s.Pool == PoolPinned) && p.Pinned {
			trip("pool pinned", pinnedDetail(p), resource, c.pinned())
		}
	}
	if pr := sum.Probe; pr != nil && s.StuckSessions >= 0 && pr.MaxStuckIdleInTx > s.StuckSessions {
		trip(fmt.Sprintf("stuck sessions ≤ %d", s.StuckSessions),
			fmt.Sprintf("%d stuck idle in transaction at once, %d stuck episodes", pr.MaxStuckIdleInTx, pr.StuckEpisodes),
			"connections held idle in transaction by the service", c.stuck(s.StuckSessions))
	}
	if l := sum.Load; l != nil {
		for _, t := range l.Thresholds {
			if t.Samples == 0 {
				return fmt.Errorf("%w: limit %s %s matched nothing the stage measured: no such method, tool or scenario in the load (check its name)", ErrSpec, t.Metric, t.Expression)
			}
			if !t.Pass {
				trip(t.Metric+" "+t.Expression, fmt.Sprintf("observed %s over %d", observed(t.Observed), t.Samples), resource, c.threshold(t.Metric, t.Expression))
			}
		}
		if s.Load == LoadRate && l.DroppedIterations > 0 {
			trip("arrival rate sustained", fmt.Sprintf("%d iterations dropped: every user was busy", l.DroppedIterations), resource, c.dropped())
		}
	}
	// The limits were judged in a fixed order of causes; the one that
	// tripped first is the earliest in the stage (#28).
	capreport.SortTrips(st.Trips)
	st.Held = len(st.Trips) == 0
	return nil
}

func observed(v float64) string {
	if math.IsNaN(v) {
		return "nothing"
	}
	return fmt.Sprintf("%.4g", v)
}

func pinnedDetail(p *rundir.PoolState) string {
	for _, s := range p.Services {
		if s.Pinned {
			return fmt.Sprintf("%s's %d connections pinned for %.1f s, none working", s.Name, s.Max, s.PinnedSeconds)
		}
	}
	return "the service's connections pinned"
}

// resourceBehind names the resource that ran out, from the stage's pool
// figures: the service's own pool, PgBouncer's, the connections as the
// database saw them, or none of them.
func resourceBehind(sum *rundir.Summary) string {
	p := sum.Pool
	if sum.Probe == nil || p == nil {
		return "not observed: the stage was not probed (no database DSN)"
	}
	switch {
	case p.AppPoolSampled && p.AppPoolMax > 0 && p.AppPoolMaxAcquired >= p.AppPoolMax:
		return fmt.Sprintf("the service's connection pool: %g/%g connections acquired, %g acquires waited (%.1f s in all)",
			p.AppPoolMaxAcquired, p.AppPoolMax, p.AppPoolAcquireWaits, p.AppPoolAcquireWaitSeconds)
	case p.PgBouncerSampled && p.PgBouncerMaxClWaiting > 0:
		return fmt.Sprintf("PgBouncer's pool: up to %d clients waiting for a server connection, worst wait %.0f ms",
			p.PgBouncerMaxClWaiting, 1000*p.WorstWaitSeconds)
	case p.Pinned:
		return "the service's database connections, pinned at their maximum (database view)"
	case saturated(sum) != "":
		return saturated(sum)
	case sum.Probe.MaxStuckIdleInTx > 0:
		return fmt.Sprintf("connections held idle in transaction (%d stuck at once)", sum.Probe.MaxStuckIdleInTx)
	}
	return "no pool at its limit: the service itself (its CPU, locks or upstream)"
}

// saturatedShare is the share of the load's samples a service's backends
// must have spent at their maximum, every one busy, for the pool to be
// called saturated from the database's view: most of the stage, not a
// moment at the peak.
const saturatedShare = 0.5

// saturated names the service pool saturated as the database saw it —
// its backends at their maximum with every one of them busy (active or
// in a transaction) for at least saturatedShare of the load — with the
// figures; "" when no service's was. When the pool's configured size is
// known (the reference gateway's) the maximum must be it: a pool at the
// most it happened to use, below its size, had room.
func saturated(sum *rundir.Summary) string {
	size := sum.Environment.GatewayPoolSize
	for _, s := range sum.Pool.Services {
		if s.Max < 1 || s.BusyAtMaxShare < saturatedShare || (size > 0 && s.Max < size) {
			continue
		}
		who := s.Name
		if s.ByAddress {
			who = "the clients at " + s.Name
		}
		line := fmt.Sprintf("the service's connection pool, saturated (database view): %s had %d connections, every one busy (active or in a transaction), for %.0f%% of the load (%.1f s)",
			who, s.Max, 100*s.BusyAtMaxShare, s.BusyAtMaxSeconds)
		if size > 0 {
			return line + fmt.Sprintf("; its pool is %d (stack config)", size)
		}
		return line + "; its pool's size is not known: the most it had"
	}
	return ""
}

package sizing

import (
	"fmt"
	"math"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func ptr[T any](v T) *T { return &v }

// poolSize is P: the service pool's size from its metrics, else the
// reference gateway's configured size; 0 when neither is known.
func (b *builder) poolSize(s *rundir.Summary) int {
	switch {
	case s.Pool != nil && s.Pool.AppPoolSampled && s.Pool.AppPoolMax > 0:
		b.input("pool size P", s.Pool.AppPoolMax, "connections", "measured: the service pool's metrics (its max)")
		return int(s.Pool.AppPoolMax)
	case s.Probe.AppPoolSampled && s.Probe.AppPoolMax > 0:
		b.input("pool size P", s.Probe.AppPoolMax, "connections", "measured: the service pool's metrics (its max)")
		return int(s.Probe.AppPoolMax)
	case s.Environment.GatewayPoolSize > 0:
		b.input("pool size P", float64(s.Environment.GatewayPoolSize), "connections", "stack config: the reference gateway's pool (gateway_pool_size)")
		return s.Environment.GatewayPoolSize
	}
	why := "the service exports no pool size leakbench read (scrape its metrics)"
	if s.Pool != nil && len(s.Pool.Services) > 0 {
		why += fmt.Sprintf("; the database saw at most %d connections of %s at once, a lower bound only", s.Pool.Services[0].Max, s.Pool.Services[0].Name)
	}
	b.missing("pool size P", "connections", why)
	return 0
}

// hold is h in connection-seconds per request: the service pool's own
// use time when it exports one, else the database's busy
// backend-seconds, each divided by the load's requests. The database's
// hold per transaction is an input either way.
func (b *builder) hold(s *rundir.Summary) float64 {
	var requests int64
	if s.Load != nil {
		requests = s.Load.Requests
	}
	var dbPerReq float64
	b.holdNotes(s.Probe.Hold)
	if h := s.Probe.Hold; h != nil && h.Windows > 0 {
		if h.MeanSeconds > 0 {
			b.input("hold per transaction W", h.MeanSeconds, "s", fmt.Sprintf("measured: Little's law on pg_stat_database, %.2f backends busy on average ÷ %.2f transactions/s over %.0f s; a mean only (the counters give no percentile)", h.BusyBackendsMean, h.XactsPerSecond, h.Seconds))
		}
		for _, app := range h.Apps {
			by := "application_name"
			if app.ByAddress {
				by = "client address"
			}
			b.input("busy backends of "+app.Name, app.BusyBackendsMean, "connections", fmt.Sprintf("measured: pg_stat_activity by %s, mean over the same windows; no hold per application: pg_stat_database counts transactions per database, and the probe's samples (every %s) would miss the shorter ones", by, interval(s.Probe.IntervalSeconds)))
		}
		if requests > 0 {
			dbPerReq = h.BusyBackendsMean * h.Seconds / float64(requests)
		}
	}
	if p := s.Probe; p.AppPoolUseSeconds > 0 && p.AppPoolUses > 0 {
		b.input("service pool use time per checkout", p.AppPoolUseMeanSeconds, "s", fmt.Sprintf("measured: the service pool's use_time, %.0f checkouts; a mean", p.AppPoolUses))
		if q := p.AppPoolUseQuantiles; q != nil {
			b.quantile("service pool use time per checkout, p95", q.P95, q)
		} else {
			b.missing("service pool use time per checkout, p95", "s", "the service exports its use time as a sum and a count, without a histogram's buckets: a mean only")
		}
		if requests > 0 {
			h := p.AppPoolUseSeconds / float64(requests)
			b.input("hold h", h, "connection-seconds per request", fmt.Sprintf("measured: the service pool's use_time, %.1f s in all ÷ %d requests of the load", p.AppPoolUseSeconds, requests))
			b.sz.HoldSeconds = h
			return h
		}
	}
	switch {
	case dbPerReq > 0:
		b.input("hold h", dbPerReq, "connection-seconds per request", fmt.Sprintf("measured: the database's busy backend-seconds (%.2f on average over %.0f s) ÷ %d requests of the load", s.Probe.Hold.BusyBackendsMean, s.Probe.Hold.Seconds, requests))
		b.sz.HoldSeconds = dbPerReq
		return dbPerReq
	case requests == 0:
		b.missing("hold h", "connection-seconds per request", "the run had no load: how long a request holds a connection needs its requests")
	case s.Probe.Hold == nil:
		b.missing("hold h", "connection-seconds per request", "pg_stat_database was not read")
	default:
		b.missing("hold h", "connection-seconds per request", "no busy connection-seconds were measured: "+s.Probe.Hold.Refused)
	}
	return 0
}

// holdNotes says which windows of the run the database's hold left out:
// the reader of a hold measured over part of the run must know it.
func (b *builder) holdNotes(h *rundir.Hold) {
	if h == nil {
		return
	}
	if h.ExcludedReset > 0 {
		b.sz.Notes = append(b.sz.Notes, fmt.Sprintf("pg_stat_database's counters went back during the run (a statistics reset or a restart): %d %s between two of its reads left out of the hold, their transactions unknown; the hold rests on the other %d (%.0f s)",
			h.ExcludedReset, plural(h.ExcludedReset, "window", "windows"), h.Windows, h.Seconds))
	}
	if h.ExcludedGap > 0 {
		b.sz.Notes = append(b.sz.Notes, fmt.Sprintf("a read of the server failed in %d %s: left out of the hold, whose busy backends would rest on part of the window", h.ExcludedGap, plural(h.ExcludedGap, "window", "windows")))
	}
}

// interval is the probe's sampling interval in words.
func interval(secs float64) string {
	if secs <= 0 {
		return "interval not recorded"
	}
	return fmt.Sprintf("%g ms", 1000*secs)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// serviceFigures lists what the service pool's metrics said of waits.
func (b *builder) serviceFigures(s *rundir.Summary) {
	p := s.Probe
	if !p.AppPoolSampled {
		return
	}
	b.input("service pool acquires that waited", p.AppPoolAcquireWaits, "acquires", "measured: the service pool's metrics")
	b.input("service pool wait time", p.AppPoolAcquireWaitSeconds, "s", "measured: the service pool's metrics, summed over the run")
	if q := p.AppPoolWaitQuantiles; q != nil {
		b.quantile("service pool wait time per acquire, p95", q.P95, q)
	}
}

// target is R: the flag, else the highest requests the load made in one
// second.
func (b *builder) target(s *rundir.Summary, points []rundir.LoadPoint, o Options) float64 {
	if o.TargetRate != nil {
		b.input("target rate R", *o.TargetRate, "req/s", "flag: --target-rate")
		return *o.TargetRate
	}
	var peak int64
	for _, p := range points {
		peak = max(peak, p.Requests)
	}
	if peak > 0 {
		b.input("target rate R", float64(peak), "req/s", "measured: the most requests the load made in one second (load.jsonl); --target-rate sets it")
		return float64(peak)
	}
	if l := s.Load; l != nil && l.Requests > 0 && l.Ended.After(l.Started) {
		r := float64(l.Requests) / l.Ended.Sub(l.Started).Seconds()
		b.input("target rate R", r, "req/s", "measured: the load's mean rate (no per-second record); --target-rate sets it")
		return r
	}
	b.missing("target rate R", "req/s", "the run had no load; give --target-rate")
	return 0
}

// checks sets the limits the pool needed must fit in: the pool itself,
// PgBouncer's pool when there is one, PostgreSQL's max_connections.
func (b *builder) checks(s *rundir.Summary, pool int, replicas *int) {
	need := b.sz.PoolNeeded
	if replicas != nil {
		b.input("replicas", float64(*replicas), "instances", "flag: --replicas")
	} else {
		b.missingAs("not given: ", "replicas", "instances", "--replicas; the checks say how many replicas fit")
	}
	if pool > 0 && need > 0 {
		b.sz.Checks = append(b.sz.Checks, rundir.SizingCheck{Resource: "service pool", Need: ptr(need), Have: ptr(pool), Fits: ptr(pool >= need),
			Detail: fmt.Sprintf("a pool of %d serves at most %.1f req/s at this hold; %.1f req/s needs %d", pool, b.sz.CeilingReqPerS, b.sz.TargetReqPerS, need)})
	}
	maxConns, reserved := b.serverLimits(s)
	bouncer := s.Probe.PgBouncerSampled || s.Environment.PgBouncerVersion != ""
	// What reaches PostgreSQL: PgBouncer's pool when it is in front,
	// else every replica's pool.
	front := 0
	if bouncer {
		size := s.Probe.PgBouncerPoolSize
		switch {
		case size > 0:
			b.input("PgBouncer default_pool_size", float64(size), "connections", "measured: PgBouncer's SHOW DATABASES pool_size for the database, read at start")
			front = size
		case s.Environment.PgBouncerPoolSize > 0:
			size = s.Environment.PgBouncerPoolSize
			b.input("PgBouncer default_pool_size", float64(size), "connections", "stack config: default_pool_size")
			front = size
		default:
			b.missing("PgBouncer default_pool_size", "connections", "PgBouncer is in front but its configuration was not read")
		}
		if size > 0 && need > 0 {
			b.sz.Checks = append(b.sz.Checks, fitCheck("PgBouncer default_pool_size", "a pool's transactions reach PostgreSQL through PgBouncer's pool: each replica's pool of %d may have that many in transactions at once",
				need, replicas, 0, size, "default_pool_size"))
		}
	} else if need > 0 {
		front = -1
	}
	if maxConns <= 0 || reserved < 0 {
		return
	}
	switch {
	case front > 0:
		n := front + reserved
		b.sz.Checks = append(b.sz.Checks, rundir.SizingCheck{Resource: "PostgreSQL max_connections", Need: ptr(n), Have: ptr(maxConns), Fits: ptr(n <= maxConns),
			Detail: fmt.Sprintf("PgBouncer's pool of %d (one user and database) + %d reserved = %d of %d", front, reserved, n, maxConns)})
	case front < 0:
		b.sz.Checks = append(b.sz.Checks, fitCheck("PostgreSQL max_connections", "every replica's pool of %d connects to PostgreSQL directly",
			need, replicas, reserved, maxConns, "max_connections"))
	}
}

// fitCheck is need per replica × replicas + reserved against have; with
// replicas not given, how many replicas fit.
func fitCheck(resource, why string, need int, replicas *int, reserved, have int, name string) rundir.SizingCheck {
	c := rundir.SizingCheck{Resource: resource, Have: ptr(have)}
	detail := fmt.Sprintf(why, need)
	if replicas == nil {
		fit := int(math.Floor(float64(have-reserved) / float64(need)))
		room := fmt.Sprintf("%s %d − %d reserved leaves", name, have, reserved)
		if reserved == 0 {
			room = fmt.Sprintf("%s %d leaves", name, have)
		}
		c.Detail = fmt.Sprintf("%s; %s room for %d such replicas", detail, room, max(fit, 0))
		return c
	}
	n := need**replicas + reserved
	c.Need, c.Fits = ptr(n), ptr(n <= have)
	c.Detail = fmt.Sprintf("%s: %d × %d replicas + %d reserved = %d of %d", detail, need, *replicas, reserved, n, have)
	if reserved == 0 {
		c.Detail = fmt.Sprintf("%s: %d × %d replicas = %d of %d", detail, need, *replicas, n, have)
	}
	return c
}

// serverLimits are max_connections and the reserved slots: as the probe
// read them, else max_connections from the stack's configuration (the
// reserved ones then not measured); -1 for what is not known.
func (b *builder) serverLimits(s *rundir.Summary) (maxConns, reserved int) {
	if sv := s.Probe.Server; sv != nil {
		b.input("max_connections", float64(sv.MaxConnections), "connections", "measured: the probe read it at start")
		b.input("reserved connections", float64(sv.Reserved()), "connections", "measured: superuser_reserved_connections + reserved_connections, read at start")
		return sv.MaxConnections, sv.Reserved()
	}
	maxConns, reserved = -1, -1
	if m := s.Environment.MaxConnections; m > 0 {
		b.input("max_connections", float64(m), "connections", "stack config: max_connections")
		maxConns = m
	} else {
		b.missing("max_connections", "connections", "the probe did not read it (a summary rebuilt from the probe's files, or written before it did)")
	}
	b.missing("reserved connections", "connections", "the probe did not read superuser_reserved_connections")
	return maxConns, reserved
}

// quantile adds a percentile estimated from the service pool's
// histogram, with the bucket it lies in: the estimate is no closer than
// that, and one beyond the highest finite bucket is a lower bound.
func (b *builder) quantile(name string, v rundir.PoolTimeQuantile, q *rundir.PoolTimeQuantiles) {
	where := fmt.Sprintf("; within the bucket from %g to %g s", v.BucketLowSeconds, v.BucketHighSeconds)
	if v.AtLeast {
		where = fmt.Sprintf("; at least %g s, its highest finite bucket: a lower bound", v.BucketLowSeconds)
	}
	b.input(name, v.Seconds, "s", q.Source+where)
}

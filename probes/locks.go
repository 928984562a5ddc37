package probes

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// The lock cascade. While some episode is stuck (open for StuckAfter or
// longer), the probe asks, at most once a second, which backends wait for
// a lock and who blocks them (pg_blocking_pids), and charges each waiter
// to the stuck episodes among its blockers: an episode records how many
// distinct backends waited on its locks — directly, or behind a backend
// that waits on them (a chain) — and how long they waited, summed
// (each waiter from when its statement began waiting, its state_change, to
// the last read that still saw it wait: within a second). Nobody waits, or
// nothing is stuck: nothing is read.

// blockersSQL lists the watched database's backends waiting for a lock,
// with their blockers. pg_blocking_pids is cheap only when few backends
// wait; it runs only for those (wait_event_type = 'Lock').
const blockersSQL = `SELECT a.pid, a.backend_start, a.state_change, pg_blocking_pids(a.pid), now()
FROM pg_stat_get_activity(NULL) AS a
WHERE a.datid = (SELECT oid FROM pg_database WHERE datname = $1) AND a.wait_event_type = 'Lock'`

// blockersEvery spaces the reads of blockersSQL.
const blockersEvery = time.Second

// waiter is one backend that waited on an episode's locks.
type waiter struct {
	since, last time.Time
}

// readBlockers charges the waiting backends to the stuck episodes that
// block them, when some episode is stuck and a second has passed.
func (p *Poller) readBlockers(ctx context.Context, now time.Time) {
	if now.Sub(p.blockersReadAt) < blockersEvery || !p.track.anyStuck(now, p.cfg.StuckAfter) {
		return
	}
	p.blockersReadAt = now
	conn, err := p.pg.link.get(ctx)
	if err != nil {
		return // the next sample reports the connection's failure
	}
	rctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	rows, err := conn.Query(rctx, blockersSQL, p.pg.db)
	if err != nil {
		p.warn.report("postgres", p.pg.link.failed(err), now)
		return
	}
	defer rows.Close()
	type waiting struct {
		key        backendKey
		since, now time.Time
		blockers   []int32
	}
	var all []waiting
	byPID := map[int32]int{}
	for rows.Next() {
		var (
			pid             int32
			start, since, t pgtype.Timestamptz
			blockers        []int32
		)
		if rows.Scan(&pid, &start, &since, &blockers, &t) != nil {
			continue
		}
		byPID[pid] = len(all)
		all = append(all, waiting{backendKey{pid, utc(start)}, utc(since), utc(t), blockers})
	}
	// A backend waits, through a chain, on everyone its blockers wait on:
	// C behind B behind a stuck session waits for that session's end as
	// surely as B does, so the session is charged with both.
	for _, w := range all {
		p.track.blocked(w.key, transitiveBlockers(w.blockers, func(pid int32) []int32 {
			if i, ok := byPID[pid]; ok {
				return all[i].blockers
			}
			return nil
		}), w.since, w.now, p.cfg.StuckAfter)
	}
}

// transitiveBlockers is every backend direct blocks on, directly or
// through the blockers of the backends it names (next), each once; a
// cycle (a deadlock the server has yet to break) ends the walk.
func transitiveBlockers(direct []int32, next func(int32) []int32) []int32 {
	seen := make(map[int32]bool, len(direct))
	out := make([]int32, 0, len(direct))
	queue := append([]int32(nil), direct...)
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		if seen[b] {
			continue
		}
		seen[b] = true
		out = append(out, b)
		queue = append(queue, next(b)...)
	}
	return out
}

// anyStuck: some open episode has been idle in transaction for stuckAfter
// or longer at now.
func (t *tracker) anyStuck(now time.Time, stuckAfter time.Duration) bool {
	for _, o := range t.open {
		if now.Sub(o.ep.Start) >= stuckAfter {
			return true
		}
	}
	return false
}

// blocked charges waiter w (waiting since since, seen at now) to the stuck
// open episodes of the blocking pids.
func (t *tracker) blocked(w backendKey, blockers []int32, since, now time.Time, stuckAfter time.Duration) {
	for _, b := range blockers {
		for _, o := range t.open {
			if o.ep.PID != b || now.Sub(o.ep.Start) < stuckAfter {
				continue
			}
			if o.waiters == nil {
				o.waiters = map[backendKey]waiter{}
			}
			cur, ok := o.waiters[w]
			if !ok || since.After(cur.since) { // a new statement of that backend: a new wait
				if ok {
					o.waitedBefore += cur.last.Sub(cur.since).Seconds()
					o.waitCount++
				}
				cur.since = since
			}
			cur.last = now
			o.waiters[w] = cur
		}
	}
}

// settleWaiters sets an ending episode's Blocked and BlockedWaitSeconds.
func settleWaiters(o *openEpisode, ep *rundir.Episode) {
	if len(o.waiters) == 0 {
		return
	}
	ep.Blocked = len(o.waiters) + o.waitCount
	ep.BlockedWaitSeconds = o.waitedBefore
	for _, w := range o.waiters {
		ep.BlockedWaitSeconds += w.last.Sub(w.since).Seconds()
	}
}

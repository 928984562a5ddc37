package probes

import (
	"strings"

	"github.com/leakbench/leakbench/internal/lib/pgappname"
)

// activitySQL reads, in one statement and so from one snapshot of the
// server's backend status table (taken once per transaction), the
// server's clock, the client backends of the watched database (other than
// the probe's own) counted by state, the oldest open transaction, and —
// as arrays, so that everything comes in one row and only what is needed
// crosses the wire — the rows episode tracking needs: the backends idle in
// transaction (either state) and those whose episodes are open ($2,
// whatever their state now), with what episodes keep: backend_start,
// state_change, last query, application name and client address. When $3 is true it also reads pg_stat_database (the Poller asks
// once a second: PostgreSQL publishes those counters about that often).
// It runs in autocommit: inside a longer transaction the snapshot would
// stay frozen at its first read.
//
// It calls pg_stat_get_activity(NULL) directly rather than through the
// pg_stat_activity view, which joins pg_database and pg_authid for
// columns the probe does not need. Either way the server builds every
// column of every backend, all databases counted, and looks each pid up
// in the proc array: that is most of a sample's cost, about 2 µs of CPU
// per backend connected (BenchmarkSample). The per-backend functions
// (pg_stat_get_backend_*) would be cheaper but cannot tell an idle
// session from one idle in an aborted transaction: PostgreSQL clears
// xact_start when a transaction block fails.
//
// The per-application counts (the database's view of each service's pool)
// come as one JSON array of [name, by address, active, idle, idle in
// transaction, aborted, other, latest state_change] rows: a handful of
// applications, one small text a sample.
const activitySQL = `WITH a AS MATERIALIZED (
    SELECT a.*, (a.state LIKE 'idle in transaction%' OR a.pid = ANY($2::int4[])) AS w
    FROM pg_stat_get_activity(NULL) AS a
    WHERE a.datid = (SELECT oid FROM pg_database WHERE datname = $1)
      AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
      AND a.application_name IS DISTINCT FROM '` + pgappname.Preflight + `'
)
SELECT s.*, d.xact_commit, d.xact_rollback, {{dbcols}},
  (SELECT coalesce(json_agg(json_build_array(g.app, g.byaddr, g.active, g.idle, g.iit, g.iita, g.other,
      to_char(g.last AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))), '[]')::text
   FROM (SELECT coalesce(nullif(a.application_name, ''), host(a.client_addr), 'local socket') AS app,
       coalesce(a.application_name, '') = '' AS byaddr,
       count(*) FILTER (WHERE a.state = 'active') AS active, count(*) FILTER (WHERE a.state = 'idle') AS idle,
       count(*) FILTER (WHERE a.state = 'idle in transaction') AS iit,
       count(*) FILTER (WHERE a.state = 'idle in transaction (aborted)') AS iita,
       count(*) FILTER (WHERE a.state IS NULL OR a.state NOT IN ('active', 'idle', 'idle in transaction', 'idle in transaction (aborted)')) AS other,
       max(a.state_change) AS last
     FROM a GROUP BY 1, 2 ORDER BY 1) AS g)
FROM (
  SELECT now(), min(a.xact_start), count(*),
    count(*) FILTER (WHERE a.state = 'active'), count(*) FILTER (WHERE a.state = 'idle'),
    count(*) FILTER (WHERE a.state = 'idle in transaction'),
    count(*) FILTER (WHERE a.state = 'idle in transaction (aborted)'),
    array_agg(a.pid) FILTER (WHERE a.w), array_agg(a.backend_start) FILTER (WHERE a.w),
    array_agg(a.state_change) FILTER (WHERE a.w),
    array_agg(coalesce(a.state, '')) FILTER (WHERE a.w), array_agg(coalesce(a.query, '')) FILTER (WHERE a.w),
    array_agg(coalesce(a.application_name, '')) FILTER (WHERE a.w),
    array_agg(coalesce(host(a.client_addr), '')) FILTER (WHERE a.w)
  FROM a
) AS s
LEFT JOIN pg_stat_database AS d ON $3 AND d.datname = $1`

// The pg_stat_database columns PostgreSQL 14 added.
const (
	dbCols14  = `d.idle_in_transaction_time, d.sessions_fatal, d.sessions_killed, d.sessions_abandoned`
	dbColsOld = `NULL::float8, NULL::int8, NULL::int8, NULL::int8`
)

// activityFor fills in activitySQL for a server version
// (server_version_num).
func activityFor(version int) string {
	cols := dbCols14
	if version < 140000 {
		cols = dbColsOld
	}
	return strings.Replace(activitySQL, "{{dbcols}}", cols, 1)
}

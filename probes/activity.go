package probes

import "strings"

// The statements that read the watched database's activity. Each reads,
// in one statement and so from one snapshot of the server's backend status
// table (taken once per transaction), the server's clock, the oldest open
// transaction, the client backends of the database (other than the
// probe's own) counted by state — a backend outside a transaction is idle
// — and, as arrays, the rows episode tracking needs: the backends idle in
// transaction and those whose episodes are open ($2, whatever their state
// now), with state, state_change and last query. All in one row: only
// what is needed crosses the wire. When $3 is true they also read
// pg_stat_database (the Poller asks once a second: PostgreSQL publishes
// those counters about that often). They run in autocommit: inside a
// longer transaction the snapshot would stay frozen at its first read.
//
// pg_stat_activity costs the server about 2 µs of CPU per backend
// connected, all databases counted, whatever the query keeps of it: for
// each row PostgreSQL builds all its columns and looks the pid up in the
// proc array. The per-backend functions (pg_stat_get_backend_*) cost a
// fifth of that but do not give state or state_change, which
// pg_stat_get_activity(pid) gives for one backend at about 20 µs a call.
// So there are two ways:
//
//   - scan reads pg_stat_activity once;
//   - pick reads pid and xact_start of every backend with the per-backend
//     functions (client_port is NULL for background processes) and calls
//     pg_stat_get_activity(pid) only for the backends inside a transaction
//     and those tracked.
//
// The sampler picks while fewer than pickMax backends were inside a
// transaction at the previous read (a healthy service at rest), and scans
// otherwise. BenchmarkSample measures both.
const (
	scanSQL = `SELECT s.*, d.xact_commit, d.xact_rollback, {{dbcols}} FROM (
  SELECT now(), {{aggs}}
  FROM (
    SELECT a.*, a.xact_start AS in_xact, (a.state LIKE 'idle in transaction%' OR a.pid = ANY($2::int4[])) AS w
    FROM pg_stat_get_activity(NULL) AS a
    WHERE a.datid = (SELECT oid FROM pg_database WHERE datname = $1)
      AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
  ) AS a
) AS s
LEFT JOIN pg_stat_database AS d ON $3 AND d.datname = $1`

	pickSQL = `SELECT s.*, d.xact_commit, d.xact_rollback, {{dbcols}} FROM (
  SELECT now(), {{aggs}}
  FROM (
    SELECT pg_stat_get_backend_pid(i) AS pid, pg_stat_get_backend_xact_start(i) AS in_xact
    FROM pg_stat_get_backend_idset() AS i
    WHERE pg_stat_get_backend_dbid(i) = (SELECT oid FROM pg_database WHERE datname = $1)
      AND pg_stat_get_backend_client_port(i) IS NOT NULL
      AND pg_stat_get_backend_pid(i) <> pg_backend_pid()
  ) AS b
  LEFT JOIN LATERAL (
    SELECT a.*, (a.state LIKE 'idle in transaction%' OR a.pid = ANY($2::int4[])) AS w
    FROM pg_stat_get_activity(b.pid) AS a
    WHERE (b.in_xact IS NOT NULL OR b.pid = ANY($2::int4[])) AND a.backend_type = 'client backend'
    OFFSET 0 -- not flattened: the condition on b gates the call
  ) AS a ON true
) AS s
LEFT JOIN pg_stat_database AS d ON $3 AND d.datname = $1`

	// aggs counts the backends by state (in_xact is every backend's
	// xact_start; a.state is known for those in a transaction) and collects
	// the wanted rows (w) into arrays, in the order read scans them.
	aggs = `min(in_xact),
    count(*) FILTER (WHERE in_xact IS NULL), count(*) FILTER (WHERE in_xact IS NOT NULL),
    count(*) FILTER (WHERE in_xact IS NOT NULL AND a.state = 'active'),
    count(*) FILTER (WHERE in_xact IS NOT NULL AND a.state = 'idle in transaction'),
    count(*) FILTER (WHERE in_xact IS NOT NULL AND a.state = 'idle in transaction (aborted)'),
    array_agg(a.pid) FILTER (WHERE a.w), array_agg(a.backend_start) FILTER (WHERE a.w),
    array_agg(a.xact_start) FILTER (WHERE a.w), array_agg(a.state_change) FILTER (WHERE a.w),
    array_agg(coalesce(a.state, '')) FILTER (WHERE a.w), array_agg(coalesce(a.query, '')) FILTER (WHERE a.w),
    array_agg(coalesce(a.application_name, '')) FILTER (WHERE a.w),
    array_agg(coalesce(host(a.client_addr), '')) FILTER (WHERE a.w), array_agg(coalesce(a.client_port, 0)) FILTER (WHERE a.w)`

	// The pg_stat_database columns PostgreSQL 14 added.
	dbCols14  = `d.idle_in_transaction_time, d.sessions_fatal, d.sessions_killed, d.sessions_abandoned`
	dbColsOld = `NULL::float8, NULL::int8, NULL::int8, NULL::int8`
)

// pickMax is where picking stops being cheaper than a scan
// (BenchmarkSample at 900 connections).
const pickMax = 60

// activitySQL fills in one of the statements for a server version
// (server_version_num).
func activitySQL(stmt string, version int) string {
	cols := dbCols14
	if version < 140000 {
		cols = dbColsOld
	}
	return strings.NewReplacer("{{aggs}}", aggs, "{{dbcols}}", cols).Replace(stmt)
}

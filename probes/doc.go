// Package probes watches a PostgreSQL database — and the PgBouncer in
// front of it, and the service's own connection pool — while load runs,
// and turns what it sees into evidence of leaked connections: sessions
// left idle in transaction, how long each held its connection, the query
// it was left after, and who ran out of connections because of it.
//
// A Poller owns one ticker (100 ms by default). On every tick it reads
// pg_stat_activity on one dedicated autocommit connection (a transaction
// would freeze the view), as a pg_monitor role with a 1 s
// statement_timeout and read-only transactions, so that the probe itself
// never holds a transaction open or adds load that matters; once a second
// the same read includes pg_stat_database. When a PgBouncer admin DSN is
// given it also reads SHOW POOLS and SHOW STATS on a second connection,
// and SHOW SERVERS and SHOW CLIENTS when an episode grows long enough to
// need its link. Prometheus endpoints of the service (Config.Scrape) are
// scraped every second in a goroutine of their own, so that a slow
// endpoint never delays the database samples; package poolmetrics reads
// them (the built-in pool mappings, Config.Mappings for others).
//
// PostgreSQL is the one source Start insists on. A failed read of any
// source later, or of PgBouncer or a scrape target from the start, is
// recorded — a gap in the samples when PostgreSQL failed — and reported
// once as a Warning with what to do; the connection is re-established
// with backoff and sampling goes on.
//
// From successive samples the Poller cuts episodes: one per span a backend
// sat idle in transaction, from the server's state_change to the moment the
// transaction moved on (exact, from state_change) or the backend vanished
// (bounded by the samples around it, never before a timeout was due;
// classified "timeout" when that matches idle_in_transaction_session_timeout,
// else "terminated"; exact when Config.ServerLogFile lets the probe read the
// kill from the server's log, which package serverlog reads). An episode's
// length is its release latency. Episodes at least StuckAfter long are
// stuck; grouped by the Fingerprint of the session's last query they name
// the culprit.
//
// Query texts are stored and shown masked (querytext.Mask: every literal a ?),
// since drivers that interpolate values put e-mail addresses, tokens and
// passwords in them; Config.KeepQueryText keeps them raw. The Summary's
// memory does not grow with the run: a day of samples costs what a minute
// does.
//
// With Config.RunDir set, every sample goes to samples.jsonl and every
// finished episode to episodes.jsonl as they happen, each line written
// through at once, so that a killed run keeps its evidence; FORMAT.md
// describes both files field by field. With Config.MetricsAddr the
// probe's own metrics (leakbench_probe_*) are served at /metrics.
//
// The summary's Hold is how long a transaction kept its connection busy,
// by Little's law on the database's own counters (hold.go): the mean
// backends in a transaction over the transactions that ended a second,
// pg_stat_database read once a second, the probe's own transactions
// taken out and a window with a counter reset left out and counted.
// /metrics has its two sides as counters (busy_backend_seconds_total,
// transactions_total) and the run's mean (hold_seconds). The hold is a
// mean only: Little's law gives no percentile, and pg_stat_database
// records no transaction's length. There is no hold per application
// either: pg_stat_database counts transactions per database, and
// samples 100 ms apart would miss the shorter ones, so each application
// gets only its share of the busy time
// (application_busy_backend_seconds_total, summary's Hold.Apps). Where
// the service's pool exports them, its own use and wait time are there
// too (app_pool_use_seconds_total, app_pool_uses_total,
// app_pool_acquire_wait_seconds_total, app_pool_acquire_waits_total).
//
//	p, err := probes.Start(ctx, probes.Config{
//		DSN:               env.ProbeDSN,
//		PgBouncerAdminDSN: env.PgBouncerAdminDSN,
//		Scrape:            []poolmetrics.Target{{URL: env.GatewayMetricsURL}},
//		RunDir:            runDir,
//		OnWarning:         func(w rundir.Warning) { log.Printf("%s: %s", w.Source, w.Message) },
//	})
//	if err != nil {
//		return err
//	}
//	runLoad(ctx)                   // meanwhile p.Status() feeds a progress line
//	sum, err := p.Stop()
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%d stuck episodes, release p99 %.3fs\n", sum.StuckEpisodes, sum.ReleaseP99Seconds)
package probes

import ()

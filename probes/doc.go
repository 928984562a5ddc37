// Package probes watches a PostgreSQL database (and the PgBouncer in front
// of it) while load runs, and turns what it sees into evidence of leaked
// connections: sessions left idle in transaction.
//
// A Poller owns one ticker. On every tick it reads pg_stat_activity on one
// dedicated autocommit connection (a transaction would freeze the view),
// as a pg_monitor role with a 1 s statement_timeout and read-only
// transactions, so that the probe itself never holds a transaction open or
// adds load that matters. When a PgBouncer admin DSN is given it also reads
// SHOW POOLS on a second connection. A failed read is recorded as a gap and
// the connection is re-established with backoff.
//
// From successive samples the Poller cuts episodes: one per span a backend
// sat idle in transaction, from the server's state_change to the moment the
// transaction moved on (exact, from state_change) or the backend vanished
// (bounded by the samples around it; classified "timeout" when that matches
// idle_in_transaction_session_timeout, else "terminated"). An episode's
// length is its release latency. Episodes at least StuckAfter long are
// stuck; grouped by the Fingerprint of the session's last query they name
// the culprit.
//
// With Config.RunDir set, every sample goes to samples.jsonl and every
// finished episode to episodes.jsonl as they happen, so that a killed run
// keeps its evidence.
//
//	p, err := probes.Start(ctx, probes.Config{
//		DSN:               env.ProbeDSN,
//		PgBouncerAdminDSN: env.PgBouncerAdminDSN,
//		Database:          "mcp",
//		RunDir:            runDir,
//	})
//	if err != nil {
//		return err
//	}
//	runLoad(ctx)                   // meanwhile p.Snapshot() feeds a progress line
//	sum, err := p.Stop()
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%d stuck episodes, release p99 %.3fs\n", sum.StuckEpisodes, sum.ReleaseP99Seconds)
package probes

package probes

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/leakbench/leakbench/internal/lib/pgappname"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

const (
	currentDatabaseSQL = `SELECT current_database()`
	databaseExistsSQL  = `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`
	versionSQL         = `SELECT current_setting('server_version_num')::int`

	// timeoutSQL reads the timeout as it applies to the probe's session:
	// a per-role or per-database override for the application's role is
	// not seen.
	timeoutSQL = `SHOW idle_in_transaction_session_timeout`

	// privilegeSQL: without pg_read_all_stats (part of pg_monitor) other
	// roles' backends show a NULL state, so idle-in-transaction sessions
	// would be invisible rather than reported.
	privilegeSQL = `SELECT pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')`

	// limitsSQL reads what bounds the server's connections: sizing checks
	// every pool against them. reserved_connections is PostgreSQL 16's
	// (missing_ok: NULL before).
	limitsSQL = `SELECT current_setting('max_connections')::int, current_setting('superuser_reserved_connections')::int,
       current_setting('reserved_connections', true)::int`

	// logSettingsSQL reads what the probe needs to read the server's log
	// (package serverlog): its line prefix and the zone of its timestamps.
	logSettingsSQL = `SELECT current_setting('log_line_prefix'), current_setting('log_timezone')`
)

// The probe's session settings, sent at connection start.
var probeParams = map[string]string{
	// A slow read is abandoned by the server instead of piling up.
	"statement_timeout": "1000",
	// The probe only reads; the server enforces it.
	"default_transaction_read_only": "on",
	// Shows who the extra session is, whatever the DSN says.
	"application_name": probeApplicationName,
}

// probeApplicationName names the probe's session (package pgappname).
const probeApplicationName = pgappname.Probe

// statementTimeout matches probeParams; a read's context allows a little
// more so that the server's timeout, which keeps the connection, fires
// first.
const statementTimeout = time.Second

// pgSampler reads pg_stat_activity and pg_stat_database on one dedicated
// connection.
type pgSampler struct {
	link     *link
	db       string
	sql      string
	rows     []backendRow // reused between reads
	prev     dbCounters
	hasPrev  bool
	dbReadAt time.Time
	// own counts the probe's statements on its connection; ownDB says
	// whether that connection is to the watched database, where they
	// are transactions pg_stat_database counts.
	own     *stmtCounter
	ownDB   bool
	ownBase int64 // own at the previous read of pg_stat_database
	limits  rundir.ServerLimits
}

// dbStatsEvery spaces the reads of pg_stat_database.
const dbStatsEvery = time.Second

// activity is one read of the server.
type activity struct {
	now        time.Time
	states     rundir.StateCounts
	oldestXact time.Time // zero: no open transaction
	db         *rundir.DatabaseSample
	rows       []backendRow      // idle in transaction, or asked for
	apps       []rundir.AppConns // the backends by application
}

// dbCounters are pg_stat_database's cumulative counters.
type dbCounters struct {
	commit, rollback         int64
	idleInTxMs               float64
	fatal, killed, abandoned int64
}

func newPGSampler(dsn string, interval time.Duration) (*pgSampler, error) {
	l, err := newLink("postgres", dsn, interval)
	if err != nil {
		return nil, err
	}
	for k, v := range probeParams {
		l.cfg.RuntimeParams[k] = v
	}
	// The activity statement is prepared once per connection (pgx caches
	// it and prepares it again after a reconnect): the server plans it
	// once, and results come in the binary format, whose arrays and
	// timestamps decode at a fraction of the text format's cost.
	l.cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	own := &stmtCounter{}
	l.cfg.Tracer = own
	return &pgSampler{link: l, own: own}, nil
}

// setup connects, checks privileges, and settles the database to watch and
// the idle-in-transaction timeout.
func (s *pgSampler) setup(ctx context.Context, db string) (timeout time.Duration, err error) {
	conn, err := s.link.get(ctx)
	if err != nil {
		return 0, err
	}
	var allStats bool
	if err := conn.QueryRow(ctx, privilegeSQL).Scan(&allStats); err != nil {
		return 0, s.link.failed(fmt.Errorf("check privileges: %w", err))
	}
	if !allStats {
		return 0, fmt.Errorf("%w: role %q cannot see other roles' sessions: grant it pg_monitor (GRANT pg_monitor TO %s;) or pg_read_all_stats",
			ErrConfig, s.link.cfg.User, pgx.Identifier{s.link.cfg.User}.Sanitize())
	}
	var connDB string
	if err := conn.QueryRow(ctx, currentDatabaseSQL).Scan(&connDB); err != nil {
		return 0, s.link.failed(fmt.Errorf("read current database: %w", err))
	}
	if db == "" {
		db = connDB
	} else {
		// A misspelt name would read as a database nobody uses.
		var exists bool
		if err := conn.QueryRow(ctx, databaseExistsSQL, db).Scan(&exists); err != nil {
			return 0, s.link.failed(fmt.Errorf("look up database %q: %w", db, err))
		}
		if !exists {
			return 0, fmt.Errorf("%w: database %q does not exist on this server: name one that does (or leave it out to watch the DSN's)", ErrConfig, db)
		}
	}
	s.db, s.ownDB = db, db == connDB
	var reserved pgtype.Int4
	if err := conn.QueryRow(ctx, limitsSQL).Scan(&s.limits.MaxConnections, &s.limits.SuperuserReservedConnections, &reserved); err != nil {
		return 0, s.link.failed(fmt.Errorf("read max_connections: %w", err))
	}
	if reserved.Valid {
		n := int(reserved.Int32)
		s.limits.ReservedConnections = &n
	}
	var version int
	if err := conn.QueryRow(ctx, versionSQL).Scan(&version); err != nil {
		return 0, s.link.failed(fmt.Errorf("read server version: %w", err))
	}
	s.sql = activityFor(version)
	var setting string
	if err := conn.QueryRow(ctx, timeoutSQL).Scan(&setting); err != nil {
		return 0, s.link.failed(fmt.Errorf("read idle_in_transaction_session_timeout: %w", err))
	}
	if timeout, err = parseSetting(setting); err != nil {
		return 0, fmt.Errorf("postgres: idle_in_transaction_session_timeout: %w", err)
	}
	return timeout, nil
}

// logSettings reads log_line_prefix and log_timezone.
func (s *pgSampler) logSettings(ctx context.Context) (prefix, tz string, err error) {
	conn, err := s.link.get(ctx)
	if err != nil {
		return "", "", err
	}
	if err := conn.QueryRow(ctx, logSettingsSQL).Scan(&prefix, &tz); err != nil {
		return "", "", s.link.failed(fmt.Errorf("read log settings: %w", err))
	}
	return prefix, tz, nil
}

// read returns one look at the server; tracked are the pids whose rows
// are wanted whatever their state. The returned rows are reused by the
// next read.
func (s *pgSampler) read(ctx context.Context, tracked []int32) (activity, error) {
	var a activity
	conn, err := s.link.get(ctx)
	if err != nil {
		return a, err
	}
	readDB := time.Since(s.dbReadAt) >= dbStatsEvery
	rows, err := conn.Query(ctx, s.sql, s.db, tracked, readDB)
	if err != nil {
		return a, s.link.failed(err)
	}
	defer rows.Close()
	var (
		total, active, idle, iit, iita int64
		oldestXact                     pgtype.Timestamptz
		commit, rollback               pgtype.Int8
		idleInTxMs                     pgtype.Float8
		fatal, killed, abandoned       pgtype.Int8
		pids                           []int32
		backendStarts, stateChanges    []pgtype.Timestamptz
		states, queries, apps, addrs   []string
		appsJSON                       string
	)
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return a, s.link.failed(err)
		}
		return a, s.link.failed(fmt.Errorf("activity query returned no rows"))
	}
	err = rows.Scan(&a.now, &oldestXact, &total, &active, &idle, &iit, &iita,
		&pids, &backendStarts, &stateChanges, &states, &queries, &apps, &addrs,
		&commit, &rollback, &idleInTxMs, &fatal, &killed, &abandoned, &appsJSON)
	if err != nil {
		return a, s.link.failed(fmt.Errorf("read activity: %w", err))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return a, s.link.failed(err)
	}
	for _, n := range []int{len(backendStarts), len(stateChanges), len(states), len(queries), len(apps), len(addrs)} {
		if n != len(pids) {
			return a, fmt.Errorf("postgres: activity arrays of different lengths")
		}
	}
	s.rows = s.rows[:0]
	for i, pid := range pids {
		s.rows = append(s.rows, backendRow{PID: pid, BackendStart: utc(backendStarts[i]), StateChange: utc(stateChanges[i]),
			State: states[i], Query: queries[i], ApplicationName: apps[i], ClientAddr: addrs[i]})
	}
	if a.apps, err = parseApps(appsJSON); err != nil {
		return a, fmt.Errorf("postgres: backends by application: %w", err)
	}
	a.now = a.now.UTC()
	a.states = rundir.StateCounts{Active: int(active), Idle: int(idle), IdleInTx: int(iit), IdleInTxAborted: int(iita),
		Other: int(total - active - idle - iit - iita)}
	a.oldestXact = utc(oldestXact)
	a.rows = s.rows
	if readDB {
		s.dbReadAt = time.Now()
	}
	if commit.Valid { // else not read, or no statistics entry yet
		a.db = s.delta(dbCounters{commit: commit.Int64, rollback: rollback.Int64,
			idleInTxMs: idleInTxMs.Float64, fatal: fatal.Int64, killed: killed.Int64, abandoned: abandoned.Int64})
		// The probe's statements from the previous read to this one: the
		// transactions of its own that the window's change includes (to
		// within the second its backend may publish them late).
		own := s.own.n.Load()
		if a.db != nil && !a.db.Reset && s.ownDB {
			a.db.ProbeXacts = own - s.ownBase
		}
		s.ownBase = own
	}
	return a, nil
}

// delta returns the change since the previous read: nil on the first read;
// after a statistics reset (a counter went back) a sample marked Reset
// with no counts, which restarts the baseline.
func (s *pgSampler) delta(c dbCounters) *rundir.DatabaseSample {
	p, had := s.prev, s.hasPrev
	s.prev, s.hasPrev = c, true
	if !had {
		return nil
	}
	d := &rundir.DatabaseSample{
		XactCommit: c.commit - p.commit, XactRollback: c.rollback - p.rollback,
		IdleInTxSeconds: (c.idleInTxMs - p.idleInTxMs) / 1000,
		SessionsFatal:   c.fatal - p.fatal, SessionsKilled: c.killed - p.killed, SessionsAbandoned: c.abandoned - p.abandoned,
	}
	if d.XactCommit < 0 || d.XactRollback < 0 || d.IdleInTxSeconds < 0 || d.SessionsFatal < 0 || d.SessionsKilled < 0 || d.SessionsAbandoned < 0 {
		return &rundir.DatabaseSample{Reset: true}
	}
	return d
}

func (s *pgSampler) close() { s.link.close() }

// stmtCounter is a pgx tracer counting the statements a connection ran
// and the statements it prepared: on the watched database each is a
// transaction of the probe's own in pg_stat_database's counts, which
// the hold measured from them must leave out.
type stmtCounter struct{ n atomic.Int64 }

func (c *stmtCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (c *stmtCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) { c.n.Add(1) }

func (c *stmtCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return ctx
}

func (c *stmtCounter) TracePrepareEnd(_ context.Context, _ *pgx.Conn, d pgx.TracePrepareEndData) {
	if !d.AlreadyPrepared {
		c.n.Add(1)
	}
}

// utc is t in UTC, or the zero time for NULL.
func utc(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

package probes

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

const (
	// activitySQL reads the watched database's client backends, other than
	// the probe's own, with the server's clock. The LEFT JOIN returns one
	// row of NULLs besides now() when there are none. Run in autocommit:
	// inside a transaction pg_stat_activity would stay frozen at its first
	// read.
	activitySQL = `SELECT now(), a.pid, a.backend_start, a.xact_start, a.state_change,
       coalesce(a.state, ''), coalesce(a.query, ''), coalesce(a.application_name, ''),
       coalesce(host(a.client_addr), '')
FROM (SELECT) AS one
LEFT JOIN pg_stat_activity AS a
       ON a.backend_type = 'client backend' AND a.datname = $1 AND a.pid <> pg_backend_pid()`

	currentDatabaseSQL = `SELECT current_database()`

	// timeoutSQL reads the timeout as it applies to the probe's session:
	// a per-role or per-database override for the application's role is
	// not seen.
	timeoutSQL = `SHOW idle_in_transaction_session_timeout`

	// privilegeSQL: without pg_read_all_stats (part of pg_monitor) other
	// roles' backends show a NULL state, so idle-in-transaction sessions
	// would be invisible rather than reported.
	privilegeSQL = `SELECT pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')`
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

const probeApplicationName = "leakbench-probe"

// statementTimeout matches probeParams; a read's context allows a little
// more so that the server's timeout, which keeps the connection, fires
// first.
const statementTimeout = time.Second

// pgSampler reads pg_stat_activity on one dedicated connection.
type pgSampler struct {
	link *link
	db   string
	rows []backendRow // reused between reads
}

func newPGSampler(dsn string, interval time.Duration) (*pgSampler, error) {
	l, err := newLink("postgres", dsn, interval)
	if err != nil {
		return nil, err
	}
	for k, v := range probeParams {
		l.cfg.RuntimeParams[k] = v
	}
	// One round trip per read, no server-side prepared statements to keep.
	l.cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return &pgSampler{link: l}, nil
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
		return 0, fmt.Errorf("%w: role %q cannot see other roles' sessions: grant it pg_monitor (or pg_read_all_stats)", ErrConfig, s.link.cfg.User)
	}
	if db == "" {
		if err := conn.QueryRow(ctx, currentDatabaseSQL).Scan(&db); err != nil {
			return 0, s.link.failed(fmt.Errorf("read current database: %w", err))
		}
	}
	s.db = db
	var setting string
	if err := conn.QueryRow(ctx, timeoutSQL).Scan(&setting); err != nil {
		return 0, s.link.failed(fmt.Errorf("read idle_in_transaction_session_timeout: %w", err))
	}
	if timeout, err = parseSetting(setting); err != nil {
		return 0, fmt.Errorf("postgres: idle_in_transaction_session_timeout: %w", err)
	}
	return timeout, nil
}

// read returns the server's now() and the database's client backends.
func (s *pgSampler) read(ctx context.Context) (time.Time, []backendRow, error) {
	conn, err := s.link.get(ctx)
	if err != nil {
		return time.Time{}, nil, err
	}
	rows, err := conn.Query(ctx, activitySQL, s.db)
	if err != nil {
		return time.Time{}, nil, s.link.failed(err)
	}
	defer rows.Close()
	s.rows = s.rows[:0]
	var (
		now                                time.Time
		pid                                pgtype.Int4
		backendStart, xactStart, stateChng pgtype.Timestamptz
		r                                  backendRow
	)
	for rows.Next() {
		err := rows.Scan(&now, &pid, &backendStart, &xactStart, &stateChng,
			&r.State, &r.Query, &r.ApplicationName, &r.ClientAddr)
		if err != nil {
			return time.Time{}, nil, s.link.failed(err)
		}
		if !pid.Valid {
			continue // no backends: the row of NULLs
		}
		r.PID = pid.Int32
		r.BackendStart = utc(backendStart)
		r.XactStart = utc(xactStart)
		r.StateChange = utc(stateChng)
		s.rows = append(s.rows, r)
	}
	if err := rows.Err(); err != nil {
		return time.Time{}, nil, s.link.failed(err)
	}
	if now.IsZero() {
		return time.Time{}, nil, s.link.failed(fmt.Errorf("activity query returned no rows"))
	}
	return now.UTC(), s.rows, nil
}

func (s *pgSampler) close() { s.link.close() }

// utc is t in UTC, or the zero time for NULL.
func utc(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

package starter

// What the probes will need from the service's PostgreSQL, asked once:
// read-only queries on one autocommit connection under a short statement
// timeout, as the probes themselves run.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	dbConnectTimeout = 5 * time.Second
	maxApplications  = 20
)

// Queries, one per finding. pg_has_role with MEMBER covers a grant
// through another role; current_setting reads the value in force for
// this role and database.
const (
	sqlRole = `SELECT current_user, pg_has_role(current_user, 'pg_monitor', 'MEMBER')`
	sqlIdle = `SELECT current_setting('idle_in_transaction_session_timeout')`
	sqlMax  = `SELECT current_setting('max_connections')::int`
	// The other sessions' application names: the service's pool is among
	// them, named or not ("" counts the unnamed).
	sqlApps = `SELECT coalesce(application_name, ''), count(*) FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ` + "21"
)

// checkDatabase connects to dsn and reads what Database holds. Its
// errors never quote the DSN (it may hold a password).
func checkDatabase(ctx context.Context, dsn string) (*Database, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: the probe DSN is not a valid connection string or URL (details withheld: they could contain its password)", ErrOptions)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > dbConnectTimeout {
		cfg.ConnectTimeout = dbConnectTimeout
	}
	cfg.RuntimeParams["statement_timeout"] = "2000"
	cfg.RuntimeParams["application_name"] = "leakbench-init"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the probe DSN (%s@%s:%d): %w", cfg.User, cfg.Host, cfg.Port, redactErr(err, cfg.Password))
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	db := &Database{}
	if err := conn.QueryRow(ctx, sqlRole).Scan(&db.Role, &db.PgMonitor); err != nil {
		return nil, fmt.Errorf("read the role's grants: %w", redactErr(err, cfg.Password))
	}
	if err := conn.QueryRow(ctx, sqlIdle).Scan(&db.IdleInTxTimeout); err != nil {
		return nil, fmt.Errorf("read idle_in_transaction_session_timeout: %w", redactErr(err, cfg.Password))
	}
	if err := conn.QueryRow(ctx, sqlMax).Scan(&db.MaxConnections); err != nil {
		return nil, fmt.Errorf("read max_connections: %w", redactErr(err, cfg.Password))
	}
	rows, err := conn.Query(ctx, sqlApps)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_activity: %w", redactErr(err, cfg.Password))
	}
	for rows.Next() {
		var a Application
		if err := rows.Scan(&a.Name, &a.Sessions); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read pg_stat_activity: %w", err)
		}
		if len(db.Applications) == maxApplications {
			db.ApplicationsCut = true
			continue
		}
		a.Name = oneLine(a.Name, 64)
		db.Applications = append(db.Applications, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pg_stat_activity: %w", redactErr(err, cfg.Password))
	}
	return db, nil
}

// IdleInTx returns idle_in_transaction_session_timeout as a duration
// (0: off); ok is false when it cannot be read.
func (db *Database) IdleInTx() (time.Duration, bool) {
	v := strings.TrimSpace(db.IdleInTxTimeout)
	if v == "0" {
		return 0, true
	}
	if n, err := strconv.Atoi(v); err == nil { // a bare number: milliseconds
		return time.Duration(n) * time.Millisecond, true
	}
	for _, u := range []struct{ suffix, unit string }{{"ms", "ms"}, {"s", "s"}, {"min", "m"}, {"h", "h"}, {"d", "h"}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.Atoi(num)
			if err != nil {
				continue
			}
			d, _ := time.ParseDuration(strconv.Itoa(n) + u.unit)
			if u.suffix == "d" {
				d *= 24
			}
			return d, true
		}
	}
	return 0, false
}

// redactErr masks the password in err's text, should a message quote it.
func redactErr(err error, pw string) error {
	if err == nil || len(pw) < 4 || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}

package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrPoolTimeout is returned when no pooled connection could be had within
// the pool timeout: the pool is exhausted.
var ErrPoolTimeout = errors.New("database pool exhausted: no connection within the pool timeout")

// Store owns the gateway's bounded connection pool and hands out Sessions.
type Store struct {
	pool        *pgxpool.Pool
	poolTimeout time.Duration
	log         *slog.Logger

	// poolTimeouts counts acquires that gave up after the pool timeout.
	poolTimeouts atomic.Int64

	mu   sync.Mutex
	open map[*Session]struct{} // sessions acquired and not yet closed
	stop chan struct{}
	done chan struct{}
}

// openStore connects the pool. Statements use pgx's exec mode (unnamed
// statements in one round trip), which PgBouncer 1.18 supports in
// transaction pooling, where named prepared statements would break. Exec
// mode caches nothing by statement text, which is also why every
// statement may carry its request's sqlcommenter comment (sqlcomment.go)
// at no cost to a cache.
func openStore(ctx context.Context, dsn string, size int, poolTimeout time.Duration, log *slog.Logger) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database DSN: %w", err)
	}
	cfg.MaxConns = int32(size)
	cfg.MinConns = 0
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	cfg.ConnConfig.RuntimeParams["application_name"] = "mcp-gateway"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create database pool: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reach the database: %w", err)
	}
	s := &Store{pool: pool, poolTimeout: poolTimeout, log: log,
		open: map[*Session]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.reapDead()
	return s, nil
}

// Session is a unit of work on one pooled connection, like an ORM session:
// it begins a transaction on first use ("autobegin") and issues BEGIN and
// COMMIT itself. Unlike pgx.Tx, a failed Commit leaves the connection
// checked out and the server-side transaction open — as SQLAlchemy's does.
// Only Close gives the connection back.
type Session struct {
	store *Store
	conn  *pgxpool.Conn
	inTx  bool
	// autocommit sessions never BEGIN: each statement is its own
	// transaction, and between statements the backend is plain "idle".
	autocommit bool
	// detached is set when the request that opened the session has
	// finished with it. A detached session still open was leaked.
	detached atomic.Bool
	// comment is the sqlcommenter comment appended to the session's
	// statements: its request's trace context (sqlcomment.go).
	comment string
}

// Detach tells the store the owning request is done with the session,
// whether or not it was closed — what a Python frame going away is to an
// unclosed SQLAlchemy session.
func (sess *Session) Detach() { sess.detached.Store(true) }

// NewSession checks a connection out of the pool, waiting at most the pool
// timeout.
func (s *Store) NewSession(ctx context.Context) (*Session, error) {
	return s.newSession(ctx, false)
}

// NewAutocommitSession is NewSession for a session that runs every
// statement in its own transaction, like a SQLAlchemy engine configured
// with isolation_level="AUTOCOMMIT" or a bare pgx connection.
func (s *Store) NewAutocommitSession(ctx context.Context) (*Session, error) {
	return s.newSession(ctx, true)
}

func (s *Store) newSession(ctx context.Context, autocommit bool) (*Session, error) {
	actx, cancel := context.WithTimeout(ctx, s.poolTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			s.poolTimeouts.Add(1)
			return nil, ErrPoolTimeout
		}
		return nil, fmt.Errorf("acquire database connection: %w", err)
	}
	sess := &Session{store: s, conn: conn, autocommit: autocommit, comment: sqlCommentFrom(ctx)}
	s.mu.Lock()
	s.open[sess] = struct{}{}
	s.mu.Unlock()
	return sess, nil
}

func (sess *Session) begin(ctx context.Context) error {
	if sess.inTx || sess.autocommit {
		return nil
	}
	if _, err := sess.conn.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	sess.inTx = true
	return nil
}

// Query runs a query inside the session's transaction.
func (sess *Session) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := sess.begin(ctx); err != nil {
		return nil, err
	}
	return sess.conn.Query(ctx, sess.annotate(sql), args...)
}

// QueryRow runs a query inside the session's transaction and scans its
// first row into dest; found is false when it returned no row.
func (sess *Session) QueryRow(ctx context.Context, sql string, args []any, dest ...any) (found bool, err error) {
	rows, err := sess.Query(ctx, sql, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	return true, rows.Err()
}

// QueryRows runs a query inside the session's transaction and calls fn
// after scanning each row into dest.
func (sess *Session) QueryRows(ctx context.Context, sql string, args, dest []any, fn func() error) error {
	rows, err := sess.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	_, err = pgx.ForEachRow(rows, dest, fn)
	return err
}

// Exec runs a statement inside the session's transaction.
func (sess *Session) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := sess.begin(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return sess.conn.Exec(ctx, sess.annotate(sql), args...)
}

// Commit commits the session's transaction, if one is open. When ctx is
// already cancelled pgx returns at once without touching the connection:
// the transaction stays open on the server.
func (sess *Session) Commit(ctx context.Context) error {
	if !sess.inTx {
		return nil
	}
	if _, err := sess.conn.Exec(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	sess.inTx = false
	return nil
}

// Close rolls back whatever is still open and returns the connection to the
// pool. It does not depend on the request's context: it must work on the
// paths where that context is already cancelled.
func (sess *Session) Close() {
	if sess.conn == nil {
		return
	}
	if sess.inTx {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := sess.conn.Exec(ctx, "ROLLBACK"); err == nil {
			sess.inTx = false
		}
		cancel()
	}
	sess.store.mu.Lock()
	delete(sess.store.open, sess)
	sess.store.mu.Unlock()
	// A connection still in a transaction (the rollback failed) is destroyed
	// by pgxpool on Release rather than reused.
	sess.conn.Release()
	sess.conn = nil
}

// reapDead gives back the connections of sessions that were never closed
// once the server has killed them (idle_in_transaction_session_timeout, or
// PgBouncer closing the client after its server connection died). This is
// how capacity comes back in the incident: the application's pool notices
// the broken connection and replaces it; until then the slot stays taken.
// Live leaked connections are left alone — that is the leak.
func (s *Store) reapDead() {
	defer close(s.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		var dead []*Session
		for sess := range s.open {
			// Only sessions nobody is using: a session in active use is
			// owned by its request; checking it would race with the query.
			//lint:ignore SA1019 Ping would send a statement inside the leaked transaction and change what pg_stat_activity shows; CheckConn only reads.
			if sess.detached.Load() && sess.conn.Conn().PgConn().CheckConn() != nil {
				dead = append(dead, sess)
			}
		}
		for _, sess := range dead {
			delete(s.open, sess)
		}
		s.mu.Unlock()
		for _, sess := range dead {
			s.log.Info("database connection of an unclosed session was closed by the server; returning it to the pool")
			sess.conn.Release() // pgxpool destroys a closed connection
		}
	}
}

// close stops the reaper and closes the pool. Leaked (detached) sessions
// are closed here, since nobody else ever will. Sessions still owned by a
// running handler — go-sdk does not cancel a stateful tool handler when its
// client goes away — are given time to finish; if they do not, the pool is
// abandoned rather than closed, because pgxpool.Close would wait for them
// forever (the servers behind are being stopped anyway).
func (s *Store) close() {
	close(s.stop)
	<-s.done
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		var leaked []*Session
		owned := 0
		for sess := range s.open {
			if sess.detached.Load() {
				leaked = append(leaked, sess)
				delete(s.open, sess)
			} else {
				owned++
			}
		}
		s.mu.Unlock()
		for _, sess := range leaked {
			sess.conn.Conn().PgConn().Close(context.Background()) //nolint:errcheck // shutting down
			sess.conn.Release()
		}
		if owned == 0 {
			s.pool.Close()
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("closing the gateway with database sessions still in use; abandoning the pool", "sessions", owned)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// unclosed counts sessions whose request finished without closing them.
func (s *Store) unclosed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sess := range s.open {
		if sess.detached.Load() {
			n++
		}
	}
	return n
}

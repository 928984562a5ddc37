package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// How long one connection attempt may take, and how the wait between
// attempts grows while a server stays unreachable.
const (
	connectTimeout = 5 * time.Second
	maxBackoff     = 5 * time.Second
)

// link is one dedicated connection a sampler reads through. When it dies
// (server restart, pg_terminate_backend) the next read reconnects; while
// reconnecting fails, attempts are spaced out with a doubling backoff (up
// to maxBackoff) and the reads in between fail fast with the last
// attempt's error.
type link struct {
	what    string // "postgres" or "pgbouncer"; prefixes errors
	cfg     *pgx.ConnConfig
	conn    *pgx.Conn
	backoff time.Duration
	retryAt time.Time
	lastErr error
	minWait time.Duration
}

// newLink parses dsn. Its error never quotes the DSN: pgx redacts passwords
// in parse errors only on a best-effort basis.
func newLink(what, dsn string, minWait time.Duration) (*link, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s DSN is not a valid connection string or URL: want postgres://user:password@host:port/database or host=… port=… user=… dbname=… (details withheld: they could contain its password)", ErrConfig, what)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	return &link{what: what, cfg: cfg, minWait: minWait}, nil
}

// get returns the connection, connecting first if there is none and the
// backoff allows.
func (l *link) get(ctx context.Context) (*pgx.Conn, error) {
	if l.conn != nil {
		return l.conn, nil
	}
	if time.Now().Before(l.retryAt) {
		// The same words as the failed attempt's: one failure, one warning.
		return nil, fmt.Errorf("%s: connect: %w", l.what, l.lastErr)
	}
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if l.what == "postgres" && isPgBouncerRefusal(err) {
		return nil, fmt.Errorf("%w: %s DSN must reach PostgreSQL directly, not through PgBouncer: %w", ErrConfig, l.what, l.redact(err))
	}
	if err != nil {
		l.backoff = min(max(2*l.backoff, l.minWait), maxBackoff)
		l.retryAt = time.Now().Add(l.backoff)
		l.lastErr = l.redact(err)
		if h := hint(l.what, l.cfg.User, net.JoinHostPort(l.cfg.Host, strconv.Itoa(int(l.cfg.Port))), err); h != "" {
			l.lastErr = &hintedError{err: l.lastErr, hint: h}
		}
		return nil, fmt.Errorf("%s: connect: %w", l.what, l.lastErr)
	}
	l.conn, l.backoff = conn, 0
	return conn, nil
}

// failed takes the error of a read and says what to record. A connection
// that the error closed is dropped, to be replaced at the next read; a
// server-side error (a statement timeout, say) leaves it in place.
func (l *link) failed(err error) error {
	if l.conn != nil && l.conn.IsClosed() {
		l.conn = nil
		l.retryAt = time.Time{} // the first reconnect is immediate
	}
	return fmt.Errorf("%s: %w", l.what, l.redact(err))
}

func (l *link) close() {
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = l.conn.Close(ctx)
	l.conn = nil
}

// redact masks the password in err's text in case a driver or server
// message quotes it; errors.Is and errors.As still see err.
func (l *link) redact(err error) error {
	pw := l.cfg.Password
	if err == nil || len(pw) < 4 || !strings.Contains(err.Error(), pw) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), pw, "xxxxx"), err: err}
}

// isPgBouncerRefusal says whether err is PgBouncer refusing the probe's
// session settings at login.
func isPgBouncerRefusal(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "08P01" && // protocol_violation
		strings.Contains(pgErr.Message, "unsupported startup parameter")
}

// hintedError adds what to do to a connection error.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() + " — " + e.hint }
func (e *hintedError) Unwrap() error { return e.err }

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

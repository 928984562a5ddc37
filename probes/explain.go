package probes

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// hint says what to do about a failed connection attempt by the probe's
// what ("postgres" or "pgbouncer") as user; empty when it has nothing
// better to say than the error itself.
func hint(what, user, host string, err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "28P01", what == "pgbouncer" && (strings.Contains(pgErr.Message, "SASL authentication failed") ||
			strings.Contains(pgErr.Message, "password authentication failed")):
			return "wrong password for user " + user + ": check the password in the DSN (or ~/.pgpass)"
		case pgErr.Code == "28000":
			return "the server refuses user " + user + " from this host: it needs a pg_hba.conf entry (or the role does not exist)"
		case pgErr.Code == "3D000":
			return "the DSN names a database that does not exist on this server"
		case pgErr.Code == "53300":
			return "the server has no connection slot left (max_connections); the probe needs one"
		case pgErr.Code == "57P03":
			return "the server is starting up or shutting down; the probe retries"
		case what == "pgbouncer" && strings.Contains(pgErr.Message, "not allowed"):
			return "PgBouncer's admin console refused user " + user + ": add it to stats_users (read-only is enough) or admin_users in pgbouncer.ini, then RELOAD"
		case what == "pgbouncer" && strings.Contains(pgErr.Message, "no such database"):
			return "connect to PgBouncer's admin console: the DSN's database must be \"pgbouncer\""
		}
		return ""
	}
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing is listening at " + host + ": is the server running, and is that its port?"
	case errors.As(err, &dnsErr):
		return "host name not found: check the host in the DSN"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to " + host + ": check the host in the DSN"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "no answer from " + host + " within " + connectTimeout.String() + ": wrong host, or a firewall drops the packets"
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

package pgshared_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/pgshared"
	"github.com/leakbench/leakbench/scenarios/stack"
)

func TestMain(m *testing.M) { pgshared.Run(m) }

func connect(t *testing.T, ctx context.Context, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestStacksShareTheServerNotTheirData starts two stacks on the package's
// cluster: each has its own seeded database, its own
// idle_in_transaction_session_timeout and connection limit, its own
// PgBouncer, its own kills in the shared log; closing one drops its
// database and leaves the other.
func TestStacksShareTheServerNotTheirData(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := pgshared.Start(t, ctx, stack.Config{NoGateway: true, IdleInTxTimeout: time.Second, Users: 3, MaxConnections: 50, PgBouncerPoolSize: 5})
	b := pgshared.Start(t, ctx, stack.Config{NoGateway: true, IdleInTxTimeout: -1, Users: 3, PgBouncerPoolSize: 5})
	if a.Database == b.Database || a.AppDSN == b.AppDSN || a.PostgresLogFile != b.PostgresLogFile {
		t.Fatalf("stacks %q (%s) and %q (%s): want two databases and PgBouncers on one server log", a.Database, a.AppDSN, b.Database, b.AppDSN)
	}
	if len(a.Tokens) != 3 {
		t.Errorf("%d tokens, want the 3 seeded users'", len(a.Tokens))
	}

	// Seeded from the template, and apart: a write in one is not in the other.
	ca, cb := connect(t, ctx, a.PostgresDSN), connect(t, ctx, b.PostgresDSN)
	for _, c := range []*pgx.Conn{ca, cb} {
		var users int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM email_users").Scan(&users); err != nil || users != 3 {
			t.Errorf("seeded users: %d, %v; want 3", users, err)
		}
	}
	if _, err := ca.Exec(ctx, "INSERT INTO email_users (email, full_name) VALUES ('only-in-a@example.test', 'A')"); err != nil {
		t.Fatal(err)
	}
	var inB int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM email_users WHERE email = 'only-in-a@example.test'").Scan(&inB); err != nil || inB != 0 {
		t.Errorf("a row written in %s is in %s (%d, %v)", a.Database, b.Database, inB, err)
	}
	var limit int
	if err := ca.QueryRow(ctx, "SELECT datconnlimit FROM pg_database WHERE datname = current_database()").Scan(&limit); err != nil || limit != 47 {
		t.Errorf("connection limit %d, %v; want 47 (max_connections 50 less 3 reserved)", limit, err)
	}

	// Through each PgBouncer, a session idles in a transaction: only a's
	// timeout (1 s) ends it.
	ia, ib := connect(t, ctx, a.AppDSN), connect(t, ctx, b.AppDSN)
	for _, c := range []*pgx.Conn{ia, ib} {
		if _, err := c.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for pgshared.IdleInTxKills(t, a) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no idle-in-transaction kill of %s in the log within 30 s", a.Database)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := pgshared.IdleInTxKills(t, b); n != 0 {
		t.Errorf("%d kills counted for %s, whose timeout is off", n, b.Database)
	}
	if _, err := ib.Exec(ctx, "COMMIT"); err != nil {
		t.Errorf("the session of %s (no timeout) did not survive: %v", b.Database, err)
	}

	if err := a.Close(); err != nil {
		t.Fatalf("close %s: %v", a.Database, err)
	}
	var left bool
	if err := cb.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", a.Database).Scan(&left); err != nil || left {
		t.Errorf("database %s still there after Close (%v)", a.Database, err)
	}
	if _, err := os.Stat(b.PostgresLogFile); err != nil {
		t.Errorf("the shared log went with one stack: %v", err)
	}
}

// TestRestartIsRefused: a stack on a shared cluster cannot stop the
// server under the others; the refusal comes before anything starts.
func TestRestartIsRefused(t *testing.T) {
	env, err := new(fixtures.Cluster).Start(context.Background(), stack.Config{NoGateway: true, RestartServers: true})
	if err == nil {
		env.Close()
		t.Fatal("a stack on a shared cluster accepted RestartServers")
	}
}

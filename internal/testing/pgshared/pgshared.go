// Package pgshared gives a test package one PostgreSQL cluster
// (fixtures.Cluster), started by the first test that needs it and stopped
// when the package's tests end, and each test a stack of its own on it: a
// database cloned from a seeded template, with its own PgBouncer and,
// unless NoGateway, gateway. initdb and a server's start-up then run once
// per package instead of once per test, and tests that wait on the clock
// can run in parallel.
//
//	func TestMain(m *testing.M) { pgshared.Run(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		env := pgshared.Start(t, stack.Config{IdleInTxTimeout: 3 * time.Second})
//		…
//	}
//
// It imports package testing, so only tests import it.
package pgshared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// shared is the package's cluster, started on first use.
var shared struct {
	mu      sync.Mutex
	cluster *fixtures.Cluster
	err     error
	stopped bool
}

// Run is a TestMain that runs the tests and then stops the cluster:
// func TestMain(m *testing.M) { pgshared.Run(m) }.
func Run(m *testing.M) { os.Exit(M(m).Run()) }

// RunSharingLocal is Run, and while the tests run every stack the local
// provider starts (fixtures.Start: a runner's sign-off, a soak) goes on
// the package's cluster too (fixtures.ShareLocal), for packages that test
// whole runs through the library.
func RunSharingLocal(m *testing.M) {
	restore := fixtures.ShareLocal(cluster)
	code := M(m).Run()
	restore()
	os.Exit(code)
}

// M wraps m so that Run also stops the cluster, for a TestMain that hands
// m to something else (goleak.VerifyTestMain(pgshared.M(m)), which then
// checks for goroutines left after the cluster is gone).
func M(m *testing.M) interface{ Run() int } { return runner{m} }

type runner struct{ m *testing.M }

func (r runner) Run() int {
	// Ctrl-C or a SIGTERM stops the cluster before the process dies; a
	// SIGKILL leaves it to the kernel (the servers' parent-death signal)
	// and the next start's sweep (fixtures.SweepLocal).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			_ = stop()
			fmt.Fprintf(os.Stderr, "pgshared: %s: stopped the shared PostgreSQL\n", sig)
			os.Exit(130)
		case <-done:
		}
	}()
	code := r.m.Run()
	signal.Stop(sigs)
	close(done)
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgshared: stop the shared PostgreSQL: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// stop stops the cluster if one was started; later Starts fail.
func stop() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.stopped = true
	return shared.cluster.Close()
}

// cluster starts the package's cluster on first use. A start that failed
// is not retried: every test that needs it ends the same way.
func cluster() (*fixtures.Cluster, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stopped {
		return nil, errors.New("pgshared: the package's tests have ended (is TestMain pgshared.Run?)")
	}
	if shared.cluster == nil && shared.err == nil {
		// Generous: initdb on a loaded 2-core machine.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.cluster, shared.err = fixtures.StartCluster(ctx, fixtures.ClusterConfig{})
		if shared.err != nil {
			_ = shared.cluster.Close()
		}
	}
	return shared.cluster, shared.err
}

// Start starts a stack as cfg says on the package's cluster and closes it
// (dropping its database) when tb ends. It ends tb when the stack cannot
// start: Missing when PostgreSQL or PgBouncer is not installed, a failure
// otherwise. Stacks on the cluster share its log (Env.PostgresLogFile; see
// fixtures.Cluster.LogFile) and, for the same seed data, their tokens.
func Start(tb testing.TB, ctx context.Context, cfg stack.Config) *fixtures.Env {
	tb.Helper()
	c, err := cluster()
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(tb, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		tb.Fatalf("start the shared PostgreSQL: %v", err)
	}
	env, err := c.Start(ctx, cfg)
	tb.Cleanup(func() {
		if err := env.Close(); err != nil {
			tb.Errorf("stop the stack: %v", err)
		}
	})
	if err != nil {
		tb.Fatalf("start the stack on the shared PostgreSQL: %v", err)
	}
	return env
}

// Lines of the shared log: which database a pid connected to, and a
// backend ended by idle_in_transaction_session_timeout (SQLSTATE 25P03).
var (
	authorizedLine = regexp.MustCompile(`\[(\d+)\] LOG:  connection authorized: user=\S+ database=(\S+)`)
	idleKillLine   = regexp.MustCompile(`\[(\d+)\] FATAL:  terminating connection due to idle-in-transaction timeout`)
)

// IdleInTxKills counts the backends of env's database that PostgreSQL's
// idle_in_transaction_session_timeout ended, from its log
// (env.PostgresLogFile). On a shared cluster the log holds every
// database's lines: a kill counts when its pid's last "connection
// authorized" line named env.Database. A stack of its own logs one
// database's lines, all counted (its log has no such lines: log_connections
// is off there).
func IdleInTxKills(tb testing.TB, env *fixtures.Env) int {
	tb.Helper()
	b, err := os.ReadFile(env.PostgresLogFile)
	if err != nil {
		tb.Fatalf("read the postgres log: %v", err)
	}
	dbOf := map[string]string{}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if m := authorizedLine.FindStringSubmatch(line); m != nil {
			dbOf[m[1]] = m[2]
			continue
		}
		if m := idleKillLine.FindStringSubmatch(line); m != nil {
			if db, ok := dbOf[m[1]]; db == env.Database || (!ok && len(dbOf) == 0) {
				n++
			}
		}
	}
	return n
}

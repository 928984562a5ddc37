package probes

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestLockCascade: a session stuck idle in transaction (the root) holds
// row locks that several backends queue on, directly and through one
// another:
//
//	W1 ─┐
//	W2 ─┼─► root (stuck, idle in transaction: rows 1, 2, 3)
//	B  ─┘    B holds row 4, waits for row 3
//	C  ───► B  (row 4): a chain, C → B → root
//	Q  ───► W1 (row 1, queued behind W1's tuple lock)
//
// The root's episode must count distinct backends, not the probe's
// sightings of them (each is seen about three times) nor their waits
// twice, and sum their waits; a stuck session that holds no lock anyone
// wants, and every other episode, records none.
func TestLockCascade(t *testing.T) {
	// Serial (no t.Parallel): it asserts the summed lock waits within half a second per waiter of the clock.
	env := startStack(t, stack.Config{IdleInTxTimeout: 10 * time.Second, Users: 10})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runDir := t.TempDir()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, RunDir: runDir, StuckAfter: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	observer := connect(t, ctx, env.PostgresDSN)
	var emails []string
	rows, err := observer.Query(ctx, "SELECT email FROM email_users ORDER BY email LIMIT 4")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		emails = append(emails, e)
	}
	if rows.Close(); len(emails) != 4 {
		t.Fatalf("%d seeded users, want 4", len(emails))
	}
	const update = "UPDATE email_users SET request_count = request_count + 1 WHERE email = $1"
	pids := map[string]int32{}
	conns := map[string]*pgx.Conn{}
	// Straight to PostgreSQL: through PgBouncer's transaction pooling a
	// client's autocommit statements may each run on another backend,
	// and a waiter's pid would be nobody's.
	for _, name := range []string{"root", "loner", "W1", "W2", "B", "C", "Q"} {
		c := connect(t, ctx, env.PostgresDSN)
		conns[name] = c
		var pid int32
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids[name] = pid
	}
	exec := func(name, sql string, args ...any) {
		t.Helper()
		if _, err := conns[name].Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %s: %v", name, sql, err)
		}
	}
	for _, name := range []string{"root", "loner", "B"} {
		exec(name, "BEGIN")
	}
	for _, e := range emails[:3] {
		exec("root", update, e)
	}
	exec("loner", stuckSQL)
	exec("B", update, emails[3])

	// The waiters, each in a goroutine of its own since each blocks; each
	// starts once the one it queues behind waits, so that the chain is the
	// one drawn above.
	done := map[string]chan error{}
	wait := func(name, email string, blockedBy ...string) {
		t.Helper()
		ch, conn := make(chan error, 1), conns[name]
		done[name] = ch
		go func() {
			_, err := conn.Exec(ctx, update, email)
			ch <- err
		}()
		var want []int32
		for _, b := range blockedBy {
			want = append(want, pids[b])
		}
		waitFor(t, 10*time.Second, name+" waits on "+fmt.Sprint(blockedBy), func() bool {
			var got []int32
			if err := observer.QueryRow(ctx, "SELECT pg_blocking_pids($1)", pids[name]).Scan(&got); err != nil {
				t.Fatal(err)
			}
			return slices.Equal(got, want)
		})
	}
	wait("W1", emails[0], "root")
	wait("W2", emails[1], "root")
	wait("B", emails[2], "root")
	wait("C", emails[3], "B")
	wait("Q", emails[0], "W1")
	const held = 3 * time.Second
	time.Sleep(held)
	exec("root", "COMMIT")
	exec("loner", "COMMIT")
	// B's update of row 3 returns once the root commits; C's then waits
	// for B's commit.
	finished := func(names ...string) {
		t.Helper()
		for _, name := range names {
			if err := <-done[name]; err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	finished("W1", "W2", "Q", "B")
	exec("B", "COMMIT")
	finished("C")
	if _, err := p.Stop(); err != nil {
		t.Fatal(err)
	}

	byPID := map[int32][]rundir.Episode{}
	for _, e := range readJSONL[rundir.Episode](t, filepath.Join(runDir, rundir.EpisodesFile)) {
		byPID[e.PID] = append(byPID[e.PID], e)
	}
	stuck := func(name string) rundir.Episode {
		t.Helper()
		for _, e := range byPID[pids[name]] {
			if e.HoldSeconds > held.Seconds()-0.5 {
				return e
			}
		}
		t.Fatalf("no stuck episode of %s (pid %d): %+v", name, pids[name], byPID[pids[name]])
		return rundir.Episode{}
	}
	root := stuck("root")
	// The probe charges an episode with every backend that waits on it,
	// directly (W1, W2, B: pg_blocking_pids names the root) or behind a
	// waiter (C behind B, Q queued behind W1): all five wait for the
	// root's commit.
	const waiters = 5
	if root.Blocked != waiters {
		t.Errorf("root's episode blocked %d backends, want %d (W1, W2, B, and through them C and Q)", root.Blocked, waiters)
	}
	// Each waited from its statement's start to the last read that saw
	// it wait, at most a second (blockersEvery) before the root's commit:
	// between held-1.5 s (the chained waits start a little later) and
	// held, each.
	if lo, hi := waiters*(held.Seconds()-1.5), waiters*(held.Seconds()+0.5); root.BlockedWaitSeconds < lo || root.BlockedWaitSeconds > hi {
		t.Errorf("root's episode: waits summed to %.2f s, want %.1f–%.1f s for %d backends held about %s", root.BlockedWaitSeconds, lo, hi, waiters, held)
	}
	if loner := stuck("loner"); loner.Blocked != 0 || loner.BlockedWaitSeconds != 0 {
		t.Errorf("an episode that held no lock anyone wanted blocked %d for %.2f s", loner.Blocked, loner.BlockedWaitSeconds)
	}
	// Nobody else is charged: B, whom C waited on, was never idle in
	// transaction for long (it was waiting, active); nor were W1 or Q.
	for pid, eps := range byPID {
		for _, e := range eps {
			if pid != pids["root"] && e.Blocked != 0 {
				t.Errorf("episode of pid %d (held %.2f s) blocked %d: only the root's may", pid, e.HoldSeconds, e.Blocked)
			}
		}
	}
}

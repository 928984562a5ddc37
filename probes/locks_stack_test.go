package probes

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/rundir"
)

// TestLockCascade: a session stuck idle in transaction holds a row lock;
// another backend waits on it until the first commits. The stuck episode
// records the one backend it blocked and about how long; an episode that
// blocked nobody records none.
func TestLockCascade(t *testing.T) {
	env := startStack(t, fixtures.Config{IdleInTxTimeout: stackTimeout, Users: 10})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runDir := t.TempDir()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, RunDir: runDir, StuckAfter: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var email string
	if err := connect(t, ctx, env.PostgresDSN).QueryRow(ctx, "SELECT min(email) FROM email_users").Scan(&email); err != nil {
		t.Fatal(err)
	}
	const update = "UPDATE email_users SET request_count = request_count + 1 WHERE email = $1"
	holder, waiter, loner := connect(t, ctx, env.AppDSN), connect(t, ctx, env.AppDSN), connect(t, ctx, env.AppDSN)
	var holderPID, lonerPID int32
	for _, c := range []struct {
		conn *pgx.Conn
		pid  *int32
	}{{holder, &holderPID}, {loner, &lonerPID}} {
		if _, err := c.conn.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if err := c.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(c.pid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holder.Exec(ctx, update, email); err != nil {
		t.Fatal(err)
	}
	if _, err := loner.Exec(ctx, stuckSQL); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, update, email) // blocks on holder's row lock
		waited <- err
	}()
	time.Sleep(3 * time.Second)
	for _, c := range []*pgx.Conn{holder, loner} {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	var found int
	for _, e := range readJSONL[rundir.Episode](t, filepath.Join(runDir, rundir.EpisodesFile)) {
		switch {
		case e.PID == holderPID && e.HoldSeconds > 2:
			found++
			// The waiter waited about 3 s; the probe reads once a second
			// from the moment the episode is stuck (0.5 s).
			if e.Blocked != 1 || e.BlockedWaitSeconds < 1 || e.BlockedWaitSeconds > 3.5 {
				t.Errorf("holder's episode: blocked %d for %.2f s; want 1 backend, 1–3.5 s", e.Blocked, e.BlockedWaitSeconds)
			}
		case e.PID == lonerPID && e.HoldSeconds > 2:
			found++
			if e.Blocked != 0 {
				t.Errorf("an episode that held no lock anyone wanted blocked %d", e.Blocked)
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 stuck episodes", found)
	}
}

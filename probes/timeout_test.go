package probes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestTimeoutHolds: sessions held idle in transaction until a short
// idle_in_transaction_session_timeout kills them, run after run, each
// watched by two probes at once — one reading the server's log, one not.
// PostgreSQL cannot kill before its timer fires, so every hold either
// reports is at least the timeout; the one with the log ends each exactly
// (the logged kill), the other within the timer's latency and a sample.
func TestTimeoutHolds(t *testing.T) {
	// Serial (no t.Parallel): it asserts hold times against the 1 s timeout and the sampling interval.
	const (
		timeout  = time.Second
		runs     = 5
		sessions = 10
		// The sessions' episodes file (the name rundir.EpisodesFile
		// gives it too).
		episodesFile = "episodes.jsonl"
	)
	env := startStack(t, stack.Config{IdleInTxTimeout: timeout, PgBouncerPoolSize: sessions + 2, Users: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	observer := connect(t, ctx, env.PostgresDSN)
	rng := rand.New(rand.NewPCG(18, 20))
	for run := range runs {
		t.Run(fmt.Sprintf("run %d", run+1), func(t *testing.T) {
			withLog, without := t.TempDir(), t.TempDir()
			var probes []*Poller
			for _, c := range []Config{
				{DSN: env.ProbeDSN, RunDir: withLog, ServerLogFile: env.PostgresLogFile},
				{DSN: env.ProbeDSN, RunDir: without},
			} {
				p, err := Start(ctx, c)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				defer p.Stop()
				probes = append(probes, p)
			}
			if w := probes[0].Status().Warnings; len(w) > 0 {
				t.Fatalf("the probe cannot read the server log: %+v", w)
			}
			var ss []*session
			var pids []int32
			for range sessions {
				// Spread over a sample interval and more, so that the
				// kills fall anywhere between two samples.
				time.Sleep(time.Duration(rng.IntN(130)) * time.Millisecond)
				s := openIdleSession(t, ctx, env, observer)
				ss, pids = append(ss, s), append(pids, s.pid)
			}
			waitFor(t, timeout+5*time.Second, "the timeout to kill every session", func() bool {
				var n int
				if err := observer.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 0
			})
			time.Sleep(killWait + 3*DefaultInterval) // the probes notice, the log's lines are read
			for i, p := range probes {
				if _, err := p.Stop(); err != nil {
					t.Fatalf("Stop: %v", err)
				}
				// The logged kill is when PostgreSQL's timer fired and the
				// backend wrote its FATAL: after the timeout by the
				// server's own timer latency, which reached 148 ms while
				// the race detector's tests loaded both cores. That
				// latency is the server's, not the probe's error.
				dir, exact, slack := withLog, true, 250*time.Millisecond
				if i == 1 {
					dir, exact, slack = without, false, DefaultInterval+500*time.Millisecond
				}
				eps := readJSONL[rundir.Episode](t, filepath.Join(dir, episodesFile))
				var holds []float64
				for _, s := range ss {
					// The session was idle in transaction for a moment
					// after BEGIN too: that is another episode.
					pid := s.pid
					i := slices.IndexFunc(eps, func(e rundir.Episode) bool { return e.PID == pid && e.Start.Equal(s.start) })
					if i < 0 {
						t.Errorf("server log %v: no episode for backend %d: %+v", exact, pid, eps)
						continue
					}
					e := eps[i]
					holds = append(holds, e.HoldSeconds)
					if e.EndReason != rundir.EndTimeout || e.EndExact != exact {
						t.Errorf("server log %v: backend %d ended %q, exact %v; want timeout, exact %v", exact, pid, e.EndReason, e.EndExact, exact)
					}
					if e.HoldSeconds < timeout.Seconds() || e.HoldSeconds > (timeout+slack).Seconds() {
						t.Errorf("server log %v: backend %d held %.4f s; want %s to %s", exact, pid, e.HoldSeconds, timeout, timeout+slack)
					}
				}
				if len(holds) > 0 {
					t.Logf("server log %v: holds %.4f–%.4f s", exact, slices.Min(holds), slices.Max(holds))
				}
			}
		})
	}
}

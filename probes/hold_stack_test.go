package probes

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestHoldOnPostgres: sessions that each hold a transaction for a known
// time — BEGIN; a read; SELECT pg_sleep(h); COMMIT, over and over — give a hold,
// by Little's law on pg_stat_database, within 10% of h and of what the
// clients timed; the probe's own transactions are left out; a statistics
// reset in the middle is seen, its window left out and counted, and the
// hold still comes out right. The server's connection limits are read.
func TestHoldOnPostgres(t *testing.T) {
	env := startStack(t, stack.Config{NoGateway: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const (
		hold     = 200 * time.Millisecond
		sessions = 4
		runFor   = 15 * time.Second // the counters are published up to 1 s late: a longer window dilutes that
	)
	runDir := t.TempDir()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, RunDir: runDir, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	var (
		wg      sync.WaitGroup
		xacts   atomic.Int64
		inTxNs  atomic.Int64
		stopped = time.Now().Add(runFor)
	)
	for range sessions {
		conn := connect(t, ctx, env.PostgresDSN)
		wg.Go(func() {
			for time.Now().Before(stopped) && ctx.Err() == nil {
				began := time.Now()
				// The table read is what a service's transaction does; it
				// also matters: PostgreSQL 15 was seen to publish the
				// transaction counts of a backend only along with other
				// statistics, so pg_sleep alone never reached
				// pg_stat_database while the session lived.
				for _, sql := range []string{"BEGIN", "SELECT 1 FROM email_team_members LIMIT 1", "SELECT pg_sleep(0.2)", "COMMIT"} {
					if _, err := conn.Exec(ctx, sql); err != nil {
						t.Errorf("%s: %v", sql, err)
						return
					}
				}
				inTxNs.Add(int64(time.Since(began)))
				xacts.Add(1)
			}
		})
	}
	// Halfway: the database's statistics are reset under the probe.
	admin := connect(t, ctx, env.PostgresDSN)
	time.Sleep(runFor / 2)
	if _, err := admin.Exec(ctx, "SELECT pg_stat_reset()"); err != nil {
		t.Fatalf("pg_stat_reset: %v", err)
	}
	wg.Wait()
	// A last second for the backends to publish their counts.
	time.Sleep(1500 * time.Millisecond)
	metrics := httpGet(t, p.MetricsURL())
	sum, err := p.Stop()
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	h := sum.Hold
	if h == nil || h.MeanSeconds == 0 {
		t.Fatalf("hold %+v, want a measure", h)
	}
	clientMean := time.Duration(inTxNs.Load() / max(xacts.Load(), 1)).Seconds()
	t.Logf("hold %.4f s (L %.3f, λ %.2f/s over %d windows, %.1f s; %d xacts, probe's own %d; excluded: %d reset, %d gap); clients: %d xacts, mean %.4f s",
		h.MeanSeconds, h.BusyBackendsMean, h.XactsPerSecond, h.Windows, h.Seconds, h.Xacts, sum.ProbeXactsTotal,
		h.ExcludedReset, h.ExcludedGap, xacts.Load(), clientMean)
	for _, want := range []struct {
		what string
		v    float64
	}{{"h", hold.Seconds()}, {"the clients' mean", clientMean}} {
		if math.Abs(h.MeanSeconds-want.v) > 0.1*want.v {
			t.Errorf("hold %.4f s, want %s %.4f s ± 10%%", h.MeanSeconds, want.what, want.v)
		}
	}
	// /metrics says the same, up to the last sample Stop took.
	if v := metricValue(metrics, "leakbench_probe_hold_seconds"); math.Abs(v-hold.Seconds()) > 0.1*hold.Seconds() {
		t.Errorf("/metrics leakbench_probe_hold_seconds %g, want %g ± 10%%", v, hold.Seconds())
	}
	if metricValue(metrics, "leakbench_probe_transactions_total") < float64(h.Xacts)/2 || metricValue(metrics, "leakbench_probe_busy_backend_seconds_total") <= 0 {
		t.Errorf("/metrics lacks Little's counters:\n%s", metrics)
	}
	if sum.DatabaseResets < 1 || h.ExcludedReset < 1 {
		t.Errorf("database_resets %d, hold excluded_reset %d: want the reset seen", sum.DatabaseResets, h.ExcludedReset)
	}
	if sum.ProbeXactsTotal < int64(runFor/time.Second)*5 {
		t.Errorf("probe_xacts_total %d: want the probe's own reads counted (about 10 a second)", sum.ProbeXactsTotal)
	}
	samples, err := jsonl.ReadFile[rundir.Sample](filepath.Join(runDir, rundir.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	resets := 0
	for _, s := range samples {
		if s.Database != nil && s.Database.Reset {
			resets++
			if s.Database.XactCommit != 0 || s.Database.ProbeXacts != 0 {
				t.Errorf("reset sample carries counts: %+v", s.Database)
			}
		}
	}
	if resets != sum.DatabaseResets {
		t.Errorf("samples.jsonl: %d reset samples, summary %d", resets, sum.DatabaseResets)
	}
	// The stack may be the package's shared cluster, whose limit is its
	// own: the probe must report what the server says.
	var want int
	if err := connect(t, ctx, env.PostgresDSN).QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if sv := sum.Server; sv == nil || sv.MaxConnections != want || sv.Reserved() < 1 {
		t.Errorf("server limits %+v, want max_connections %d (the server's) and some reserved", sv, want)
	}
}

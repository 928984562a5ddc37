package probes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// BenchmarkSample measures the probe at max_connections 100 and 1000 with
// 90% of the connections open (opened directly, as idle sessions; one in
// ten of them idle in transaction):
//
//   - postgres, postgres+pgbouncer: one tick (ns/op), with the probe's own
//     CPU (probe-cpu-ns/op, getrusage) and PostgreSQL's (pg-cpu-ns/op, its
//     processes' utime+stime from /proc) per sample;
//   - cpu-at-100ms: 10 s of sampling at the default 100 ms beside 10 s
//     without the probe, reported as CPU percent of one core: the probe's
//     process, and what it added to PostgreSQL's.
//
// Run it alone: go test ./probes -run '^$' -bench BenchmarkSample -benchtime 2000x
// (cpu-at-100ms ignores -benchtime: its ns/op means nothing). One size
// only: -bench 'BenchmarkSample/max_connections=100$/' (without the $,
// max_connections=100 matches 1000 too).
func BenchmarkSample(b *testing.B) {
	for _, maxConns := range []int{100, 1000} {
		b.Run(fmt.Sprintf("max_connections=%d", maxConns), func(b *testing.B) {
			// A small PgBouncer pool: PgBouncer keeps min_pool_size server
			// connections open, which count against max_connections too.
			// Its own server: up to 1000 connections, and the
			// postmaster's CPU is what it measures.
			env := startOwnStack(b, stack.Config{MaxConnections: maxConns, PgBouncerPoolSize: 5, IdleInTxTimeout: -1, Users: 10})
			ctx := context.Background()
			open := maxConns * 9 / 10
			openConnections(b, ctx, env.PostgresDSN, open)
			pm := postmasterPID(b, ctx, env.PostgresDSN)
			for _, bc := range []struct{ name, pgbouncer string }{{"postgres", ""}, {"postgres+pgbouncer", env.PgBouncerAdminDSN}} {
				b.Run(bc.name, func(b *testing.B) {
					p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: bc.pgbouncer, Interval: time.Hour})
					if err != nil {
						b.Fatal(err)
					}
					defer p.Stop()
					for p.Snapshot().Time.IsZero() { // the first sample is taken at Start; the next in an hour
						time.Sleep(time.Millisecond)
					}
					b.ReportAllocs()
					cpu0, pg0 := processCPU(b), postgresCPU(b, pm)
					for b.Loop() {
						p.sampleOnce(ctx)
					}
					cpu1, pg1 := processCPU(b), postgresCPU(b, pm)
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "probe-cpu-ns/op")
					b.ReportMetric(float64((pg1-pg0).Nanoseconds())/float64(b.N), "pg-cpu-ns/op")
					s := p.Snapshot()
					if s.Error != "" || s.States.IdleInTx != open/10 || s.States.Idle < open-open/10 {
						b.Fatalf("last sample: %+v, want %d idle in transaction, ≥ %d idle", s, open/10, open-open/10)
					}
				})
			}
			// The framework calls a benchmark more than once (b.N = 1 first):
			// the 20 s measurement is taken once and reported each time.
			var cpu *cpuFigures
			b.Run("cpu-at-100ms", func(b *testing.B) {
				if cpu == nil {
					cpu = measureCPU(b, ctx, env, pm)
				}
				b.ReportMetric(cpu.probePercent, "probe-cpu-%")
				b.ReportMetric(cpu.pgAddedPercent, "pg-added-cpu-%")
				b.ReportMetric(float64(cpu.samples), "samples")
			})
		})
	}
}

type cpuFigures struct {
	probePercent, pgAddedPercent float64
	samples                      int
}

// measureCPU samples at the default 100 ms for 10 s beside 10 s without
// the probe. Its figures are percent of one core.
func measureCPU(b *testing.B, ctx context.Context, env *fixtures.Env, pm int) *cpuFigures {
	const span = 10 * time.Second
	pg0 := postgresCPU(b, pm)
	time.Sleep(span)
	idle := postgresCPU(b, pm) - pg0
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN})
	if err != nil {
		b.Fatal(err)
	}
	cpu0, pg1 := processCPU(b), postgresCPU(b, pm)
	time.Sleep(span)
	cpu1, pg2 := processCPU(b), postgresCPU(b, pm)
	sum, err := p.Stop()
	if err != nil {
		b.Fatal(err)
	}
	return &cpuFigures{
		probePercent:   100 * (cpu1 - cpu0).Seconds() / span.Seconds(),
		pgAddedPercent: 100 * ((pg2 - pg1) - idle).Seconds() / span.Seconds(),
		samples:        sum.Samples,
	}
}

// openConnections opens n sessions directly to PostgreSQL, one in ten of
// them left idle in transaction, eight at a time.
func openConnections(b *testing.B, ctx context.Context, dsn string, n int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var mu sync.Mutex
	var conns []*pgx.Conn
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errs <- fmt.Errorf("connection %d: %w", i, err)
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			if i%10 == 0 {
				// The stuck statement carries a sqlcommenter comment with its
				// own traceparent, as a traced service's do.
				for _, q := range []string{"BEGIN", stuckSQL + benchComment(i)} {
					if _, err := conn.Exec(ctx, q); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close(context.Background())
		}
	})
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// processCPU is this process's user + system CPU time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func postmasterPID(b *testing.B, ctx context.Context, dsn string) int {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	f := procStat(b, backend)
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// procStat returns the fields of /proc/PID/stat after the command name
// (field 3, the state, is [0]); nil when the process is gone.
func procStat(b *testing.B, pid int) []string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(raw)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on Linux.
const clockTick = 10 * time.Millisecond

// postgresCPU is the CPU time of the postmaster and all its children,
// including those that exited since (the postmaster's cutime and cstime).
func postgresCPU(b *testing.B, postmaster int) time.Duration {
	ticks := func(f []string, fields ...int) (n int64) {
		for _, i := range fields {
			v, _ := strconv.ParseInt(f[i-3], 10, 64)
			n += v
		}
		return n
	}
	pm := procStat(b, postmaster)
	if pm == nil {
		b.Fatalf("postmaster %d is gone", postmaster)
	}
	total := ticks(pm, 14, 15, 16, 17) // utime, stime, cutime, cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := procStat(b, pid)
		if f != nil && f[1] == strconv.Itoa(postmaster) {
			total += ticks(f, 14, 15)
		}
	}
	return time.Duration(total) * clockTick
}

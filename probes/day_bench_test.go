package probes

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// dayEnv makes BenchmarkProbeDay simulate a whole day; without it, an hour.
const dayEnv = "LEAKBENCH_BENCH_DAY"

// BenchmarkProbeDay feeds the Poller's own path from a PostgreSQL read on
// — measure, episode tracking, summary, the probe's metrics and the
// recorder's JSON encoding (written to /dev/null) — with the activity of
// 1,000 simulated connections sampled every 100 ms, and reports the
// memory it takes: the heap in use after the run and at its peak (read
// every 1% of the samples), and the process's maximum RSS (getrusage: the
// whole test binary, everything it ran before included).
//
// Only the database is simulated: there is no PostgreSQL read (see
// BenchmarkSample for its cost), no PgBouncer and no scrape. Each
// connection waits 0.2–10 s, then sits idle in transaction: 85% of the
// time 50–500 ms, 12% 0.5–3 s, 3% until the 5 s
// idle_in_transaction_session_timeout kills it and it reconnects. Its
// statements are 4,096 distinct texts (values interpolated), as a driver
// without bind parameters sends them.
//
// By default it simulates an hour (36,000 samples); LEAKBENCH_BENCH_DAY=1
// simulates 24 hours (864,000 samples, ~15 million episodes):
//
//	LEAKBENCH_BENCH_DAY=1 go test ./probes -run '^$' -bench BenchmarkProbeDay -benchtime 1x
func BenchmarkProbeDay(b *testing.B) {
	hours := 1
	if os.Getenv(dayEnv) != "" {
		hours = 24
	}
	samples := hours * 36_000
	b.Run(fmt.Sprintf("connections=1000/hours=%d", hours), func(b *testing.B) {
		for b.Loop() {
			runProbeDay(b, samples)
		}
	})
}

func runProbeDay(b *testing.B, samples int) {
	const (
		conns    = 1000
		interval = 100 * time.Millisecond
		timeout  = 5 * time.Second
	)
	var null [2]*os.File
	for i := range null {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		null[i] = f
	}
	cfg := Config{DSN: "simulated", Interval: interval}.withDefaults()
	p := &Poller{cfg: cfg, timeout: timeout, metrics: newProbeMetrics(), warn: newWarnings(nil),
		track: newTracker(timeout, false), sum: newSummarizer(interval, cfg.StuckAfter, timeout),
		rec: &recorder{samples: null[0], episodes: null[1]}}
	sim := newSimulation(conns, timeout)
	runtime.GC()
	var peak uint64
	var ms runtime.MemStats
	t := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	for i := range samples {
		now := t.Add(time.Duration(i) * interval)
		var s rundir.Sample
		p.absorb(&s, sim.activity(now, p.tracked))
		s.TookSeconds = 0.001
		p.keep(&s)
		if i%(samples/100) == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	for _, e := range p.track.close() {
		p.episode(e)
	}
	sum := p.sum.summary()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	if err := p.rec.close(); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	if sum.Samples != samples || sum.TimeoutTerminated == 0 || sum.Episodes < samples || len(sum.Culprits) == 0 {
		b.Fatalf("summary: %d samples, %d episodes, %d timeouts, %d culprits", sum.Samples, sum.Episodes, sum.TimeoutTerminated, len(sum.Culprits))
	}
	b.ReportMetric(float64(sum.Samples), "samples")
	b.ReportMetric(float64(sum.Episodes), "episodes")
	b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-inuse-MB")
	b.ReportMetric(float64(peak)/1e6, "peak-heap-inuse-MB")
	b.ReportMetric(float64(ru.Maxrss)/1e3, "process-maxrss-MB")
}

// simulation is the activity of connections as the probe's read returns
// it: a row for every backend idle in transaction and for every tracked
// one, whatever its state.
type simulation struct {
	conns   []simConn
	texts   []string
	rows    []backendRow
	rng     *rand.Rand
	timeout time.Duration
}

type simConn struct {
	pid          int32
	backendStart time.Time
	inTx         bool
	stateChange  time.Time // into the current state
	next         time.Time // of the next change: tx start, release, or reconnect when gone
	killed       bool      // the hold runs into the timeout
	gone         bool      // killed, not reconnected yet
	query        string
}

func newSimulation(n int, timeout time.Duration) *simulation {
	s := &simulation{conns: make([]simConn, n), rng: rand.New(rand.NewPCG(1, 2)), timeout: timeout}
	for i := range 4096 {
		s.texts = append(s.texts, "SELECT email_team_members.team_id, email_team_members.role FROM email_team_members JOIN email_teams ON email_teams.id = email_team_members.team_id WHERE email_team_members.user_email = 'user"+
			strconv.Itoa(i)+"@example.com' AND email_team_members.is_active = true")
	}
	return s
}

func (s *simulation) uniform(lo, hi float64) time.Duration {
	return time.Duration((lo + s.rng.Float64()*(hi-lo)) * float64(time.Second))
}

// step moves connection c on to now.
func (s *simulation) step(i int, now time.Time) {
	c := &s.conns[i]
	if c.pid == 0 { // first sample: connect, idle
		c.pid, c.backendStart, c.stateChange = int32(10_000+i), now, now
		c.next = now.Add(s.uniform(0, 10))
	}
	for !c.next.After(now) {
		switch {
		case c.gone: // reconnect
			c.gone, c.pid, c.backendStart, c.stateChange = false, c.pid+int32(len(s.conns)), c.next, c.next
			c.next = c.next.Add(s.uniform(0.2, 10))
		case c.inTx && c.killed:
			c.inTx, c.killed, c.gone = false, false, true
			c.next = c.next.Add(s.uniform(0.05, 1))
		case c.inTx: // released
			c.inTx, c.stateChange = false, c.next
			c.next = c.next.Add(s.uniform(0.2, 10))
		default: // goes idle in transaction
			c.inTx, c.stateChange = true, c.next
			c.query = s.texts[s.rng.IntN(len(s.texts))]
			switch r := s.rng.Float64(); {
			case r < 0.85:
				c.next = c.next.Add(s.uniform(0.05, 0.5))
			case r < 0.97:
				c.next = c.next.Add(s.uniform(0.5, 3))
			default:
				c.killed = true
				c.next = c.next.Add(s.timeout + s.uniform(0, 0.01))
			}
		}
	}
}

// activity is what the read at now returns with tracked pids.
func (s *simulation) activity(now time.Time, tracked []int32) activity {
	a := activity{now: now}
	s.rows = s.rows[:0]
	for i := range s.conns {
		s.step(i, now)
		c := &s.conns[i]
		switch {
		case c.gone:
		case c.inTx:
			a.states.IdleInTx++
			s.rows = append(s.rows, s.row(c, stateIdleInTx))
		default:
			a.states.Idle++
		}
	}
	for _, pid := range tracked {
		c := &s.conns[int(pid-10_000)%len(s.conns)]
		if c.pid == pid && !c.gone && !c.inTx {
			s.rows = append(s.rows, s.row(c, stateIdle))
		}
	}
	a.rows = s.rows
	return a
}

func (s *simulation) row(c *simConn, state string) backendRow {
	return backendRow{PID: c.pid, BackendStart: c.backendStart, StateChange: c.stateChange, State: state,
		Query: c.query, ApplicationName: "mcp-gateway", ClientAddr: "127.0.0.1"}
}

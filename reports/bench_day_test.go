package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
)

// dayEnv makes BenchmarkReportDay render a whole day; without it, an hour.
const dayEnv = "LEAKBENCH_BENCH_DAY"

// BenchmarkReportDay renders the report (RenderRun: summary.json,
// report.md, report.html, junit.xml and every plot as PNG and SVG) of a
// run directory holding a long probe run, and reports its size: every file
// the report wrote (report-bytes), report.html alone (html-bytes, the SVG
// plots inline), the peak of the heap's live objects while rendering
// (render-peak-heap-MB, read every 20 ms) and the process's maximum RSS
// (getrusage: the whole test binary).
//
// The run directory is made up, written once per size: samples.jsonl at
// 100 ms for the whole span, each with PgBouncer's pools and, once a
// second, the service pool, at about a thousand connections; load.jsonl
// once a second; episodes.jsonl with 50,000 episodes an hour (1.2 million
// a day: a busy service at a thousand connections), a fifth of them killed
// by the 5 s timeout. An hour by default (36,000 samples), 24 hours
// (864,000) with LEAKBENCH_BENCH_DAY=1:
//
//	LEAKBENCH_BENCH_DAY=1 go test ./reports -run '^$' -bench BenchmarkReportDay -benchtime 1x
//
// The killed sub-benchmark renders the same files without summary.json,
// as of a run that was killed: the summary is rebuilt from the probe's
// files.
func BenchmarkReportDay(b *testing.B) {
	hours := 1
	if os.Getenv(dayEnv) != "" {
		hours = 24
	}
	dir := b.TempDir()
	samples, episodes := hours*36_000, hours*50_000
	writeLongRun(b, dir, samples, episodes)
	name := fmt.Sprintf("samples=%d/episodes=%d", samples, episodes)
	b.Run(name+"/finished", func(b *testing.B) { benchRender(b, dir, false) })
	b.Run(name+"/killed", func(b *testing.B) { benchRender(b, dir, true) })
}

func benchRender(b *testing.B, dir string, killed bool) {
	b.Setenv(StepSummaryEnv, "")
	summary := filepath.Join(dir, rundir.SummaryFile)
	written, err := os.ReadFile(summary)
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(summary, written, 0o644); err != nil {
			b.Fatal(err)
		}
		if killed {
			if err := os.Remove(summary); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		b.StartTimer()
		stop := watchHeap(&peak)
		if _, err := RenderRun(dir); err != nil {
			b.Fatal(err)
		}
		stop()
	}
	var report, html int64
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch d.Name() {
		case rundir.SamplesFile, rundir.EpisodesFile, rundir.LoadFile:
			return nil // the run's, not the report's
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		report += fi.Size()
		if d.Name() == rundir.HTMLFile {
			html = fi.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// The next sub-benchmark starts from the run's own summary.json.
	if err := os.WriteFile(summary, written, 0o644); err != nil {
		b.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(report), "report-bytes")
	b.ReportMetric(float64(html), "html-bytes")
	b.ReportMetric(float64(peak)/1e6, "render-peak-heap-MB")
	b.ReportMetric(float64(ru.Maxrss)/1e3, "process-maxrss-MB")
}

// watchHeap raises *peak to the live heap objects' size every 20 ms until
// the returned stop is called.
func watchHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// writeLongRun writes a finished run of n samples at 100 ms and the given
// number of episodes: summary.json, samples.jsonl, episodes.jsonl,
// load.jsonl. A leak builds up and is killed by a 5 s timeout over and
// over; PgBouncer queues clients when it peaks.
func writeLongRun(b *testing.B, dir string, n, episodes int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	t0 := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	const interval = 100 * time.Millisecond
	end := t0.Add(time.Duration(n-1) * interval)
	write := func(name string, each func(enc *json.Encoder) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		if err := each(json.NewEncoder(w)); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	write(rundir.SamplesFile, func(enc *json.Encoder) error {
		var waits float64
		for i := range n {
			phase := i % 600 // a minute: the leak builds for 50 s, the timeout clears it
			stuck := min(phase/15, 40)
			if rng.IntN(20_000) == 0 {
				stuck = 90 // a rare spike the plots must keep
			}
			s := rundir.Sample{Time: t0.Add(time.Duration(i) * interval), TookSeconds: 0.001,
				States:        rundir.StateCounts{Active: 30 + rng.IntN(80), Idle: 900 - stuck/2, IdleInTx: stuck + rng.IntN(30)},
				StuckIdleInTx: stuck, OldestIdleInTxSeconds: float64(phase) / 10,
				PgBouncer: &rundir.PoolSample{ClActive: 10 + stuck, ClWaiting: max(stuck-35, 0), SvActive: 10 + min(stuck, 20),
					MaxWaitSeconds: float64(max(stuck-35, 0)) * 0.1, Exhausted: stuck > 35, Xacts: 20, Queries: 40}}
			if i%10 == 0 {
				waits += float64(max(stuck-35, 0))
				s.AppPool = &rundir.AppPoolSample{Acquired: float64(min(10+stuck, 40)), Idle: float64(max(30-stuck, 0)), Total: 40, Max: 40,
					AcquireWaitsTotal: waits, Mapping: "gateway", Targets: 1}
			}
			if err := enc.Encode(&s); err != nil {
				return err
			}
		}
		return nil
	})
	write(rundir.EpisodesFile, func(enc *json.Encoder) error {
		for i := range episodes {
			start := t0.Add(time.Duration(rng.Int64N(int64(end.Sub(t0)))))
			hold, reason := time.Duration(rng.IntN(900)+5)*time.Millisecond, rundir.EndReleased
			if i%5 == 0 {
				hold, reason = 5*time.Second, rundir.EndTimeout
			}
			e := rundir.Episode{PID: int32(1000 + i%1000), BackendStart: t0, Start: start, End: start.Add(hold), HoldSeconds: hold.Seconds(),
				EndReason: reason, Query: "SELECT ? FROM email_team_members WHERE user_email = ?",
				Fingerprint: "SELECT ? FROM email_team_members WHERE user_email = ?", ApplicationName: "mcp-gateway", ClientAddr: "127.0.0.1"}
			if err := enc.Encode(&e); err != nil {
				return err
			}
		}
		return nil
	})
	write(rundir.LoadFile, func(enc *json.Encoder) error {
		for sec := range n / 10 {
			l := rundir.LoadPoint{Time: t0.Add(time.Duration(sec) * time.Second), ElapsedSeconds: float64(sec), ActiveUsers: 60,
				Requests: int64(150 + rng.IntN(50)), Failures: int64(rng.IntN(5)), Iterations: 40, ReqPerSecond: float64(150 + rng.IntN(50)),
				P50Ms: 20 + rng.Float64()*10, P95Ms: 80 + rng.Float64()*40, P99Ms: 200 + rng.Float64()*400}
			if err := enc.Encode(&l); err != nil {
				return err
			}
		}
		return nil
	})
	sum := probes.Summarize(probes.Config{}, 5*time.Second, nil, nil)
	write(rundir.SummaryFile, func(enc *json.Encoder) error {
		return enc.Encode(&rundir.Summary{SchemaVersion: rundir.SchemaVersion, Name: "long", Profile: "synthetic", Started: t0, Ended: end,
			EndReason: rundir.EndCompleted, Environment: rundir.Environment{Variant: "commit-in-finally", IdleInTxTimeoutSeconds: 5, GatewayPoolSize: 40},
			Probe: &sum})
	})
}

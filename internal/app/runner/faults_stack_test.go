package runner

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestFaultsOnTheStack plays a timeline of every kind of fault on a local
// stack — a reset link, PgBouncer paused, RELOAD, backends terminated, a
// slow link still on — and interrupts the run mid-fault: the harness
// survives each fault, every fault applied is recorded with its times, the
// one still on is removed, and no proxy goroutine outlives the run.
func TestFaultsOnTheStack(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a local stack under load with faults")
	}
	p, err := profiles.Parse([]byte(`
stack: {idle_in_transaction_session_timeout: 5s, users: 20}
probe: {interval: 100ms, stuck_after: 2s, drain: 0s}
faults:
  - {at: 1s, for: 1s, link: pg, toxic: reset_peer}
  - {at: 2500ms, for: 1s, action: pgbouncer_pause}
  - {at: 4s, action: pgbouncer_reload}
  - {at: 4200ms, for: 300ms, action: pgbouncer_kill}
  - {at: 4500ms, action: terminate_backends, count: 2}
  - {at: 5s, for: 1m, link: db, toxic: latency, latency: 50ms}
  - {at: 5s, for: 1m, link: upstream, toxic: latency, latency: 100ms}
timeout: 5s
scenarios:
  a:
    executor: constant-vus
    vus: 5
    duration: 40s
    flow:
      - think: 50ms
      - tools/call: {name: get_team_tools}
`), "stack.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C once the last faults are on (the slow links), whenever the
	// stack got going: the runner's own progress line says so.
	var once sync.Once
	logw := &lineWriter{emit: func(line []byte) {
		if strings.Contains(string(line), "fault: upstream latency applied") {
			once.Do(func() { time.AfterFunc(500*time.Millisecond, cancel) })
		}
	}}
	sum, err := Run(ctx, Options{Profile: p, Variant: "fixed", Name: "faults", Dir: t.TempDir(), Env: "local", Log: logw})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("run: %v, want it interrupted", err)
	}
	if len(sum.Faults) != 7 {
		t.Fatalf("faults recorded: %+v", sum.Faults)
	}
	for _, f := range sum.Faults {
		if f.Error != "" || f.Applied == nil || f.Removed == nil || f.Removed.Before(*f.Applied) {
			t.Errorf("%s: applied %v removed %v error %q", f.Name, f.Applied, f.Removed, f.Error)
		}
	}
	if last := sum.Faults[5]; last.Removed != nil && last.Removed.Sub(*last.Applied) > 10*time.Second {
		t.Errorf("the slow db link stayed on %s: not removed on interruption", last.Removed.Sub(*last.Applied))
	}
	if sum.Load == nil || sum.Load.Requests == 0 {
		t.Fatalf("no load played: %+v", sum.Load)
	}
	if sum.Probe == nil || sum.Probe.Samples < 20 {
		t.Errorf("the probe did not keep sampling through the faults: %+v", sum.Probe)
	}
	buf := make([]byte, 1<<20)
	if n := runtime.Stack(buf, true); strings.Contains(string(buf[:n]), "toxiproxy") {
		t.Errorf("a proxy goroutine outlived the run:\n%s", buf[:n])
	}
}

// TestServerRestartFaults restarts PostgreSQL (down 1 s) and PgBouncer
// (down 500 ms) under load from the fixed gateway: both servers really
// stop and come back on their ports, each fault is recorded with its times
// and what it ended, the service's pool recovers, and the load goes on
// without failures once both are back.
func TestServerRestartFaults(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a local stack under load, its servers restarted")
	}
	p, err := profiles.Parse([]byte(`
stack: {idle_in_transaction_session_timeout: 5s, users: 10}
probe: {interval: 100ms, stuck_after: 1s, drain: 0s}
faults:
  - {at: 1s, for: 1s, action: postgres_restart}
  - {at: 4s, for: 500ms, action: pgbouncer_restart}
timeout: 3s
scenarios:
  a:
    executor: constant-vus
    vus: 4
    duration: 10s
    flow:
      - think: 50ms
      - tools/call: {name: get_team_tools}
`), "restart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), Options{Profile: p, Variant: "fixed", Name: "restart", Dir: dir, Env: "local", Log: io.Discard})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(sum.Faults) != 2 {
		t.Fatalf("faults recorded: %+v", sum.Faults)
	}
	for _, f := range sum.Faults {
		if f.Error != "" || f.Applied == nil || f.Removed == nil {
			t.Fatalf("%s: applied %v removed %v error %q", f.Name, f.Applied, f.Removed, f.Error)
		}
		// Applied is when the stop had finished, Removed when the start
		// had: the window less the stop's time plus the start's. On a
		// loaded machine the stop is the slower (seen: 1 s down measured
		// as 838 ms), so half the window is the bound. And the start
		// never comes before the window's end, counted from the run's
		// start (which is before the load's).
		window := time.Duration(f.ForSeconds * float64(time.Second))
		if down := f.Removed.Sub(*f.Applied); down < window/2 {
			t.Errorf("%s: down %s, want about %gs", f.Name, down, f.ForSeconds)
		}
		if end := time.Duration((f.AtSeconds + f.ForSeconds) * float64(time.Second)); f.Removed.Sub(sum.Started) < end {
			t.Errorf("%s: removed %s into the run, before its window's end (%s)", f.Name, f.Removed.Sub(sum.Started), end)
		}
		if !f.Recovered {
			t.Errorf("%s: the pool never recovered: %+v", f.Name, f)
		}
		if f.RecoverySeconds != nil {
			t.Logf("%s: down %s, %d backends ended, errors %d during / %d after, recovered in %.1fs", f.Name,
				f.Removed.Sub(*f.Applied).Round(time.Millisecond), f.SessionsKilled, f.ErrorsDuring, f.ErrorsAfter, *f.RecoverySeconds)
		}
	}
	if pg := sum.Faults[0]; pg.SessionsKilled == 0 {
		t.Errorf("postgres_restart ended none of the gateway's backends: %+v", pg)
	}
	// After both restarts (from 6 s of load on), requests succeed again.
	var after, failedAfter int64
	for _, l := range readJSONLines[rundir.LoadPoint](t, filepath.Join(dir, rundir.LoadFile)) {
		if l.ElapsedSeconds > 7 {
			after += l.Requests
			failedAfter += l.Failures
		}
	}
	if after == 0 || failedAfter > 0 {
		t.Errorf("after the restarts: %d requests, %d failed; want requests and no failures", after, failedAfter)
	}
}

// readJSONLines reads a file of JSON lines of T.
func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	v, err := jsonl.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

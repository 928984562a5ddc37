package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// workerEnv makes this test binary a worker (leakbench worker's stand-in).
const workerEnv = "LEAKBENCH_WORKERS_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := workers.Serve(ctx, os.Stdin, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	mcptest.Main(m) // or a benchmark's server process (StartHelpers)
}

// commands starts this test binary as workers and keeps their commands,
// so that a test can kill one and check that none is left.
type commands struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
}

func (c *commands) command() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	c.mu.Lock()
	c.cmds = append(c.cmds, cmd)
	c.mu.Unlock()
	return cmd
}

// pidHolding is the process of this one's children that has path open
// (0: none).
func pidHolding(path string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		raw, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so after the ")".
		i := strings.LastIndexByte(string(raw), ')')
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		dir := filepath.Dir(st)
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && l == path {
				pid, _ := strconv.Atoi(filepath.Base(dir))
				return pid
			}
		}
	}
	return 0
}

// checkNoneLeft: every worker process, and its process group, is gone.
func (c *commands) checkNoneLeft(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cmd := range c.cmds {
		if cmd.Process == nil {
			continue
		}
		if cmd.ProcessState == nil {
			t.Errorf("worker %d (pid %d) was not waited for", i, cmd.Process.Pid)
		}
		if err := syscall.Kill(-cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %d's process group %d still exists (kill 0: %v)", i, cmd.Process.Pid, err)
		}
	}
}

func parse(t *testing.T, yaml string) *plan.Plan {
	t.Helper()
	p, err := scenariofile.Parse([]byte(yaml), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// play plays p as n workers against target into a new run directory.
func play(ctx context.Context, t *testing.T, p *plan.Plan, n int, target string, c *commands) (*rundir.LoadResult, *rundir.Workers, string, error) {
	t.Helper()
	l, err := workers.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	lay, err := workers.NewLayout(p, workers.Config{Count: n}, target, l)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log strings.Builder
	res, rec, err := workers.Play(ctx, workers.Options{Command: c.command, Layout: lay, PlanJSON: raw, Target: target,
		Dir: dir, MaxDuration: time.Minute, Log: &syncWriter{b: &log}})
	t.Logf("play's log:\n%s", log.String())
	return res, rec, dir, err
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// seededPlan: every user calls echo and a tool the server does not have
// (a JSON-RPC error, a failure), a fixed number of times.
const seededPlan = `
seed: 7
scenarios:
  s:
    executor: per-vu-iterations
    vus: 6
    iterations: 5
    flow:
      - tools/call: {name: echo, arguments: {text: "u{{user}}-i{{iteration}}"}}
      - tools/call: {name: nope}
`

// TestMergedEqualsOneProcess: three workers' merged result counts what
// one process counts on the same seeded plan, and what the server
// received; the merged histograms are the workers' merged, within HDR
// precision.
func TestMergedEqualsOneProcess(t *testing.T) {
	p := parse(t, seededPlan)
	one := mcptest.Start(t, mcptest.Options{})
	single, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: one.URL, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln := listenCounting(t)
	srv := mcptest.Start(t, mcptest.Options{Listener: ln})
	c := &commands{}
	res, rec, dir, err := play(context.Background(), t, p, 3, srv.URL, c)
	c.checkNoneLeft(t)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != single.Requests || res.Failures != single.Failures || res.Iterations != single.Iterations {
		t.Errorf("workers: %d requests, %d failures, %d iterations; one process: %d, %d, %d",
			res.Requests, res.Failures, res.Iterations, single.Requests, single.Failures, single.Iterations)
	}
	const calls = 6 * 5 * 2
	if got, want := srv.Count("tools/call"), one.Count("tools/call"); got != want || got != calls {
		t.Errorf("the workers' server received %d tools/call, one process's %d; want %d", got, want, calls)
	}
	if res.Failures != 6*5 {
		t.Errorf("failures %d, want %d (every call of nope)", res.Failures, 6*5)
	}
	if !rec.Complete || rec.Count != 3 || len(rec.Workers) != 3 || rec.SourceAddrsFrom != "loopback" || len(rec.SourceAddrs) < 3 {
		t.Errorf("record %+v", rec)
	}
	var sum int64
	for _, w := range rec.Workers {
		sum += w.Requests
		if w.Generator == nil || w.Exit != "exit status 0" || w.EndReason != results.EndCompleted {
			t.Errorf("worker %s: %+v", w.Segment, w)
		}
	}
	if sum != res.Requests {
		t.Errorf("the workers' own requests add up to %d, the merge says %d", sum, res.Requests)
	}
	if res.Generator == nil {
		t.Error("no merged generator self-check")
	}
	// Each worker dialed from its own loopback address.
	for _, a := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		if ln.from(a) == 0 {
			t.Errorf("no connection from %s; the server saw %v", a, ln.sources())
		}
	}
	checkHistograms(t, dir, 3, res, single)
}

// checkHistograms: echo's merged latency counts what one process's does,
// and its percentiles are those of the workers' histograms merged here.
func checkHistograms(t *testing.T, dir string, n int, res, single *rundir.LoadResult) {
	t.Helper()
	const key = "tools/call:echo"
	if res.Latency[key].Count != single.Latency[key].Count || res.Latency[key].Count != 30 {
		t.Fatalf("%s: %d latencies merged, one process %d; want 30", key, res.Latency[key].Count, single.Latency[key].Count)
	}
	var all *hdrhistogram.Histogram
	for i := range n {
		sh, err := results.ReadShard(filepath.Join(dir, fmt.Sprintf("worker-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sh.State.Series {
			if s.Method == "tools/call" && s.Name == "echo" {
				if all == nil {
					all = hdrhistogram.Import(sh.Hists[s.Tag].Export())
				} else {
					all.Merge(sh.Hists[s.Tag])
				}
			}
		}
	}
	if all == nil {
		t.Fatal("no worker has an echo histogram")
	}
	got := res.Latency[key]
	for _, q := range []struct {
		name string
		ms   float64
		pct  float64
	}{{"p50", got.P50Ms, 50}, {"p99", got.P99Ms, 99}} {
		want := float64(all.ValueAtQuantile(q.pct)) / 1000
		// Three significant digits, as the histograms record.
		if math.Abs(q.ms-want) > want*1e-3+1e-3 {
			t.Errorf("%s %s: merged %.3fms, the workers' histograms %.3fms", key, q.name, q.ms, want)
		}
	}
}

// longPlan runs until stopped: users calling echo with a short think.
const longPlan = `
scenarios:
  s:
    executor: constant-vus
    vus: 4
    duration: 30s
    gracefulStop: 1s
    flow:
      - tools/call: {name: echo, arguments: {text: x}}
      - think: 20ms
`

// waitForLoad waits until worker i has written a second of load.
func waitForLoad(t *testing.T, dir string, i int) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("worker-%d", i), rundir.LoadFile)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("worker %d wrote no load within 20s", i)
}

// TestKilledWorkerFailsTheRun: a worker killed mid-run fails the run,
// named; the other is stopped, its results merged, the record marked
// incomplete; no process is left.
func TestKilledWorkerFailsTheRun(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{})
	p := parse(t, longPlan)
	c := &commands{}
	dirc := make(chan string, 1)
	go func() {
		dir := <-dirc
		waitForLoad(t, dir, 1)
		// The worker that holds its load.jsonl open: Play owns the
		// commands until it returns.
		if pid := pidHolding(filepath.Join(dir, "worker-1", rundir.LoadFile)); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	res, rec, _, err := playWithDir(t, p, srv.URL, c, dirc)
	c.checkNoneLeft(t)
	if err == nil || !strings.Contains(err.Error(), "worker 1/2") || !strings.Contains(err.Error(), "died: signal: killed") {
		t.Fatalf("error %v; want worker 1/2 named as killed", err)
	}
	if rec == nil || rec.Complete || rec.Workers[1].Exit != "signal: killed" || rec.Workers[0].Exit != "exit status 0" {
		t.Fatalf("record %+v", rec)
	}
	if res == nil || res.Requests == 0 || res.Requests != rec.Workers[0].Requests {
		t.Errorf("merged %+v; want worker 0's %d requests alone", res, rec.Workers[0].Requests)
	}
}

// TestCancelStopsEveryWorker: the run's end (Ctrl-C) stops every worker,
// whose results are still merged.
func TestCancelStopsEveryWorker(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{})
	p := parse(t, longPlan)
	c := &commands{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dirc := make(chan string, 1)
	go func() {
		dir := <-dirc
		waitForLoad(t, dir, 0)
		cancel()
	}()
	res, rec, err := playCtx(ctx, t, p, srv.URL, c, dirc)
	c.checkNoneLeft(t)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v; want the context's", err)
	}
	if res == nil || res.Requests == 0 || !rec.Complete {
		t.Fatalf("merged %+v, record %+v", res, rec)
	}
	for _, w := range rec.Workers {
		if w.EndReason != results.EndInterrupted {
			t.Errorf("worker %s ended %q, want interrupted", w.Segment, w.EndReason)
		}
	}
}

func playWithDir(t *testing.T, p *plan.Plan, target string, c *commands, dirc chan<- string) (*rundir.LoadResult, *rundir.Workers, string, error) {
	res, rec, err := playCtx(context.Background(), t, p, target, c, dirc)
	return res, rec, "", err
}

// playCtx plays p as two workers, telling dirc the run directory first.
func playCtx(ctx context.Context, t *testing.T, p *plan.Plan, target string, c *commands, dirc chan<- string) (*rundir.LoadResult, *rundir.Workers, error) {
	t.Helper()
	l, err := workers.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	lay, err := workers.NewLayout(p, workers.Config{Count: 2}, target, l)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	dir := t.TempDir()
	dirc <- dir
	return workers.Play(ctx, workers.Options{Command: c.command, Layout: lay, PlanJSON: raw, Target: target, Dir: dir, MaxDuration: time.Minute})
}

// countingListener counts the connections it accepts by source address.
type countingListener struct {
	net.Listener
	mu   sync.Mutex
	seen map[string]int
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &countingListener{Listener: ln, seen: map[string]int{}}
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.seen[c.RemoteAddr().(*net.TCPAddr).IP.String()]++
		l.mu.Unlock()
	}
	return c, err
}

func (l *countingListener) from(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[ip]
}

func (l *countingListener) sources() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}

// TestLiveMetricsMerged: with a metrics address, one /metrics serves the
// workers' live metrics merged: both workers' users, both processors.
func TestLiveMetricsMerged(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{})
	p := parse(t, longPlan)
	l, err := workers.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	lay, err := workers.NewLayout(p, workers.Config{Count: 2}, srv.URL, l)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	raw, _ := json.Marshal(p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &commands{}
	scraped := make(chan string, 1)
	go func() {
		defer cancel()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			body := scrape(addr)
			if strings.Contains(body, `leakbench_vus{scenario="s"} 4`) && strings.Contains(body, "leakbench_generator_cpus 2") {
				scraped <- body
				return
			}
		}
		scraped <- scrape(addr)
	}()
	_, _, err = workers.Play(ctx, workers.Options{Command: c.command, Layout: lay, PlanJSON: raw, Target: srv.URL,
		Dir: t.TempDir(), MaxDuration: time.Minute, MetricsAddr: addr})
	c.checkNoneLeft(t)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("play: %v", err)
	}
	body := <-scraped
	if !strings.Contains(body, `leakbench_vus{scenario="s"} 4`) || !strings.Contains(body, "leakbench_generator_cpus 2") ||
		!strings.Contains(body, `leakbench_mcp_reqs_total{method="tools/call",name="echo",scenario="s"}`) {
		t.Errorf("/metrics never showed both workers' 4 users on 2 processors:\n%s", body)
	}
}

// freeAddr is a loopback address no one listens on, for a moment.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func scrape(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// workerEnv makes this test binary a worker process (leakbench worker's
// stand-in), so that the tests need no leakbench binary built.
const workerEnv = "LEAKBENCH_RUNNER_TEST_WORKER"

// runAsWorker makes this process a worker when the worker environment
// variable says so (TestMain, main_test.go, calls it first).
func runAsWorker() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := workers.Serve(ctx, os.Stdin, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func testWorker() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	return cmd
}

const workersProfile = `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 4
    iterations: 3
    flow:
      - tools/call: {name: echo, arguments: {text: "u{{user}}"}}
`

// TestRunWithWorkers: a run of your own service with --workers 2 is one
// run directory with one verdict: the workers' load merged, the workers
// recorded in summary.json with their source addresses.
func TestRunWithWorkers(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{})
	p, err := profiles.Parse([]byte(workersProfile), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log strings.Builder
	sum, err := Run(context.Background(), Options{Profile: p, Name: "w", Dir: dir, Env: "external", Log: &log,
		External: fixtures.External{GatewayURL: srv.URL}, Workers: workers.Config{Count: 2}, WorkerCommand: testWorker})
	t.Logf("log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Load == nil || sum.Load.Requests != 16 || srv.Count("tools/call") != 12 {
		t.Fatalf("load %+v; server saw %d tools/call", sum.Load, srv.Count("tools/call"))
	}
	back, err := reports.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := back.Workers
	if w == nil || w.Count != 2 || !w.Complete || w.SourceAddrsFrom != "loopback" || len(w.SourceAddrs) != 2 || w.OpenFilesLimit == 0 {
		t.Fatalf("summary.json's workers: %+v", w)
	}
	for _, f := range []string{"worker-0/series.json", "worker-1/series.json", "logs/worker-0.log", "series.json", "load.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
}

// TestWorkersRefused: what workers cannot do is refused before anything
// starts (bad input: leakbench exits 2), with the reason.
func TestWorkersRefused(t *testing.T) {
	p, err := profiles.Parse([]byte(workersProfile), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"more workers than users", Options{Env: "external", External: fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp"}, Workers: workers.Config{Count: 5}}, "the plan has 4 user(s)"},
		{"local gateway", Options{Env: "local", Workers: workers.Config{Count: 2}}, "inside this leakbench process"},
		{"with shards", Options{Env: "docker", Shards: 2, Workers: workers.Config{Count: 2}}, "give one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Profile, o.Dir, o.WorkerCommand = p, filepath.Join(t.TempDir(), "out"), testWorker
			_, err := Run(context.Background(), o)
			if !errors.Is(err, workers.ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want bad input with %q", err, tc.want)
			}
			if _, serr := os.Stat(o.Dir); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("the run directory was made: %v", serr)
			}
		})
	}
}

// TestSignoffWithWorkers: a sign-off of two builds of your own service
// plays each run's load as workers, each run recording them.
func TestSignoffWithWorkers(t *testing.T) {
	p, err := profiles.Parse([]byte(workersProfile), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before, after := mcptest.Start(t, mcptest.Options{}), mcptest.Start(t, mcptest.Options{})
	out := t.TempDir()
	_, err = Signoff(context.Background(), SignoffOptions{Profile: p, Out: out, Force: true, Mode: verdict.ModeRegression,
		Before: &SignoffTarget{External: fixtures.External{GatewayURL: before.URL}}, After: &SignoffTarget{External: fixtures.External{GatewayURL: after.URL}},
		Workers: workers.Config{Count: 2}, WorkerCommand: testWorker})
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"before", "after"} {
		run, err := reports.ReadRun(filepath.Join(out, side))
		if err != nil {
			t.Fatal(err)
		}
		if run.Workers == nil || run.Workers.Count != 2 || !run.Workers.Complete || run.Load.Requests != 16 {
			t.Errorf("%s: workers %+v, load %+v", side, run.Workers, run.Load)
		}
	}
	if before.Count("tools/call") != 12 || after.Count("tools/call") != 12 {
		t.Errorf("tools/call: before %d, after %d; want 12 each", before.Count("tools/call"), after.Count("tools/call"))
	}
}

// TestBudgetInProcess: a plan whose connections one process cannot open
// is refused before anything starts, with the numbers and --workers as
// the way out.
func TestBudgetInProcess(t *testing.T) {
	l, err := workers.ReadLimits()
	if err != nil {
		t.Fatal(err)
	}
	// Listen users have two connections: half the limit in users is more
	// than one process may open beside its own files.
	users := int(min(l.OpenFiles, 1<<40) / 2)
	if users > plan.MaxUsers {
		t.Skipf("the open-file limit here (%d) takes more users than a plan may have (%d) to exceed", l.OpenFiles, plan.MaxUsers)
	}
	p, err := profiles.Parse([]byte(fmt.Sprintf("scenarios:\n  s: {executor: constant-vus, vus: %d, duration: 1s, listen: true, flow: [ping]}\n", users)), "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, err = Run(context.Background(), Options{Profile: p, Name: "big", Dir: dir, Env: "external", External: fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp"}})
	want := fmt.Sprintf("the load needs up to %d connections (%d users, a listen user has two) but one process may open %d files", 2*users, users, l.OpenFiles)
	if !errors.Is(err, workers.ErrBadInput) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--workers") {
		t.Fatalf("error %v; want bad input with %q", err, want)
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the run directory was made: %v", serr)
	}
}

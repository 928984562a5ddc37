package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestMain lets this test binary be its own worker: run --workers starts
// os.Executable() with the argument worker, as the leakbench binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := testCLI().call(ctx, "worker", os.Args[2:])
		stop()
		os.Exit(exitCode(err))
	}
	code := m.Run()
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// TestRunWorkers: run --workers 2 against your own service is one run
// directory, one verdict, the workers recorded; bad input is exit 2 with
// the reason, before anything is written.
func TestRunWorkers(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{}).URL
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	body := "scenarios:\n  s: {executor: per-vu-iterations, vus: 2, iterations: 3, flow: [{tools/call: {name: echo, arguments: {text: x}}}]}\nthresholds:\n  mcp_reqs: ['count==8']\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := cmdRun(context.Background(), isolatedCLI(), []string{"--target", target, "--scenario", scen, "--workers", "2", "--out", out}); err != nil {
		t.Fatalf("run --workers 2: %v", err)
	}
	sum := readWorkersSummary(t, out)
	if sum.EndReason != "completed" || sum.Workers.Count != 2 || !sum.Workers.Complete || len(sum.Workers.SourceAddrs) != 2 {
		t.Errorf("summary.json: %+v", sum)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, "--workers 0: want 1 or more"},
		{[]string{"--workers", "3"}, "--workers 3: the plan has 2 user(s) at most"},
		{[]string{"--workers", "2", "--source-addrs", "192.0.2.1"}, "192.0.2.1 is not an address of this machine"},
	} {
		bad := filepath.Join(dir, "bad")
		err := cmdRun(context.Background(), isolatedCLI(), append([]string{"--target", target, "--scenario", scen, "--out", bad}, tc.args...))
		if !errors.Is(err, cliflag.ErrUsage) || exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want exit 2 with %q", tc.args, err, tc.want)
		}
		if _, serr := os.Stat(bad); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%v: the run directory was made", tc.args)
		}
	}
}

// workersSummary is what the workers tests read of a run's summary.json.
type workersSummary struct {
	EndReason string `json:"end_reason"`
	Workers   struct {
		Count       int      `json:"count"`
		Complete    bool     `json:"complete"`
		SourceAddrs []string `json:"source_addrs"`
	} `json:"workers"`
}

// readWorkersSummary reads the run directory out's summary.json.
func readWorkersSummary(t *testing.T, out string) workersSummary {
	t.Helper()
	var sum workersSummary
	readSummary(t, out, &sum)
	return sum
}

// readSummary decodes the run directory out's summary.json into v.
func readSummary(t *testing.T, out string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s/summary.json: %v", out, err)
	}
}

// TestSignoffWorkers: signoff --workers plays each side's load as
// workers; --workers 0 is exit 2.
func TestSignoffWorkers(t *testing.T) {
	before, after := mcptest.Start(t, mcptest.Options{}).URL, mcptest.Start(t, mcptest.Options{}).URL
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("scenarios:\n  s: {executor: per-vu-iterations, vus: 2, iterations: 2, flow: [{tools/call: {name: echo, arguments: {text: x}}}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	out := filepath.Join(dir, "out")
	args := []string{"--before-target", before, "--after-target", after, "--mode", "regression", "--scenario", scen, "--out", out}
	// The verdict (a few requests' rates compared) is not what is tested.
	if err := cmdSignoff(context.Background(), testCLI(), append(args, "--workers", "2")); err != nil && !errors.Is(err, errVerdict) {
		t.Fatalf("signoff --workers 2: %v", err)
	}
	for _, side := range []string{"before", "after"} {
		if sum := readWorkersSummary(t, filepath.Join(out, side)); sum.Workers.Count != 2 {
			t.Errorf("%s: workers %+v", side, sum.Workers)
		}
	}
	err := cmdSignoff(context.Background(), testCLI(), append(args[:len(args)-1], filepath.Join(dir, "bad"), "--workers", "0"))
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--workers 0") {
		t.Errorf("--workers 0: %v", err)
	}
}

// TestSoakWorkersBadInput: soak takes --workers as run does; a bad count
// is exit 2 before anything starts.
func TestSoakWorkersBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "soak")
	err := cmdSoak(context.Background(), testCLI(), []string{"--out", out, "--workers", "0"})
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--workers 0") {
		t.Errorf("soak --workers 0: %v", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("soak --workers 0 made its run directory")
	}
}

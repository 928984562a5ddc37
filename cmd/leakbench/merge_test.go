package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

const shardScenario = `scenarios:
  calls:
    executor: per-vu-iterations
    vus: 5
    iterations: 6
    flow: [ping, {tools/call: {name: echo, arguments: {text: "u{{user}}"}}}]
  rate: {executor: constant-arrival-rate, rate: 20, duration: 1s, preAllocatedVUs: 2, maxVUs: 4, flow: [tools/list]}
thresholds:
  mcp_req_failed: ['rate<0.01']
  iterations{scenario:calls}: ['count==30']
  mcp_req_duration: ['%s']
`

// TestMergeShards: three `run --shard i/3` against one MCP server, then
// `merge`: the merged counts are what the server answered, the merged
// directory renders as a run, a failed threshold is the verdict (99), and
// a shard killed mid-run is named and fails the merge (not a verdict).
func TestMergeShards(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	srv := mcptest.Start(t, mcptest.Options{})
	target := srv.URL
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, fmt.Appendf(nil, shardScenario, "p(99)<10000"), 0o644); err != nil {
		t.Fatal(err)
	}
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	dirs := make([]string, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range dirs {
		dirs[i] = filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		wg.Go(func() {
			errs[i] = cmdRun(context.Background(), isolatedCLI(), []string{"--target", target, "--scenario", scen, "--out", dirs[i],
				"--shard", fmt.Sprintf("%d/3", i), "--start-at", startAt})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged")
	if err := cmdMerge(context.Background(), isolatedCLI(), append(dirs, "--out", out, "--shards", "3", "--wait", "5s")); err != nil {
		t.Fatalf("merge: %v", err)
	}
	var sum rundir.Summary
	raw, err := os.ReadFile(filepath.Join(out, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	l := sum.Load
	if sum.EndReason != rundir.EndCompleted || l == nil || !l.ThresholdsPassed() {
		t.Fatalf("merged: end %s, load %+v", sum.EndReason, l)
	}
	// The server answers every JSON-RPC request but DELETE, plus each
	// shard's preflight initialize.
	deletes := l.Latency["DELETE"].Count
	if got := l.Requests - deletes + 3; got != srv.Answered.Load() || l.Failures != 0 {
		t.Errorf("merged %d requests (%d DELETE, %d failures) + 3 preflights, the server answered %d", l.Requests, deletes, l.Failures, srv.Answered.Load())
	}
	if c := l.Scenarios["calls"]; c.Iterations != 30 || l.Latency["tools/call"].Count != 30 || l.Latency["ping"].Count != 30 {
		t.Errorf("calls: %d iterations, %d tools/call, %d ping", c.Iterations, l.Latency["tools/call"].Count, l.Latency["ping"].Count)
	}
	if r := l.Scenarios["rate"]; r.Iterations+r.DroppedIterations != 20 {
		t.Errorf("rate: %d + %d dropped iterations, want the whole schedule's 20", r.Iterations, r.DroppedIterations)
	}
	for _, f := range []string{rundir.ReportFile, rundir.HTMLFile, rundir.LoadFile, rundir.HistogramsFile, rundir.SeriesFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("merged: %v", err)
		}
	}
	if err := cmdReport(context.Background(), isolatedCLI(), []string{out}); err != nil {
		t.Errorf("report of the merged run: %v", err)
	}
	// A merge of merges: the merged series read back as one whole shard.
	if err := cmdMerge(context.Background(), isolatedCLI(), []string{out, "--out", filepath.Join(dir, "again")}); err != nil {
		t.Errorf("merge of the merged run: %v", err)
	}

	// The same shards judged by a threshold they fail together: 99.
	for _, d := range dirs {
		rewritePlanThreshold(t, d, "0.001")
	}
	err = cmdMerge(context.Background(), isolatedCLI(), append(dirs, "--out", filepath.Join(dir, "strict")))
	if !errors.Is(err, errVerdict) {
		t.Errorf("failed threshold: %v, want the verdict", err)
	}

	if testing.Short() {
		return
	}
	// A shard killed mid-run: named, and the merge fails (exit 1).
	bin := buildCLI(t)
	long := filepath.Join(dir, "long.yaml")
	body := strings.Replace(fmt.Sprintf(shardScenario, "p(99)<10000"), "vus: 5\n    iterations: 6", "vus: 5\n    iterations: 100000\n    maxDuration: 60s", 1)
	if err := os.WriteFile(long, []byte(body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(dir, "killed")
	cmd := exec.Command(bin, "run", "--target", target, "--scenario", long, "--out", killed, "--shard", "2/3")
	cmd.Env = append(os.Environ(), "LEAKBENCH_PROBE_DSN=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // already killed on the happy path
	for range 300 {          // up to 30 s for its first second of load
		if _, err := os.Stat(filepath.Join(killed, rundir.LoadFile)); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	mcmd := exec.Command(bin, "merge", dirs[0], dirs[1], killed, "--shards", "3", "--out", filepath.Join(dir, "partial"), "--wait", "1s")
	msg, err := mcmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRunFailed {
		t.Fatalf("merge with a killed shard: %v, want exit %d\n%s", err, exitRunFailed, msg)
	}
	if !strings.Contains(string(msg), killed) || !strings.Contains(string(msg), "shard 2/3") {
		t.Errorf("the killed shard is not named:\n%s", msg)
	}
	raw, _ = os.ReadFile(filepath.Join(dir, "partial", rundir.SummaryFile))
	if !strings.Contains(string(raw), `"end_reason": "failed"`) || !strings.Contains(string(raw), "2/3") {
		t.Errorf("partial summary does not say it failed:\n%.400s", raw)
	}
}

// rewritePlanThreshold makes the mcp_req_duration threshold of a shard's
// recorded plan p(99)<bound, as if the scenario file had said so.
func rewritePlanThreshold(t *testing.T, dir, bound string) {
	t.Helper()
	p := filepath.Join(dir, rundir.SeriesFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), `p(99)\u003c10000`, `p(99)\u003c`+bound, 1) // JSON escapes <
	if s == string(raw) {
		t.Fatalf("%s: threshold not found", p)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestShardFlags(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		shard, at string
		bad       bool
	}{
		{"", "", false},
		{"1/3", "2026-12-01T09:05:00Z", false},
		{"0/1", "2026-12-01T08:00:00Z", false}, // past: at once
		{"3/3", "", true},
		{"1/3", "tomorrow", true},
		{"1/3", "2026-12-03T09:00:00Z", true}, // more than a day ahead
	} {
		_, _, err := shardFlags(tc.shard, tc.at, now)
		if (err != nil) != tc.bad || (err != nil && !errors.Is(err, cliflag.ErrUsage)) {
			t.Errorf("shardFlags(%q, %q): %v", tc.shard, tc.at, err)
		}
	}
	err := cmdRun(context.Background(), testCLI(), []string{"--variant", "fixed", "--shard", "0/2", "--out", t.TempDir()})
	if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), "--target") {
		t.Errorf("a shard of a run with its own stack: %v", err)
	}
}

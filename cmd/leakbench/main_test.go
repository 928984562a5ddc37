package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/testenv"
)

// The binary the subprocess tests run: LEAKBENCH_BINARY when set (make
// test builds it once for every package), else built once per test
// binary into cliDir, which TestMain removes.
var (
	cliOnce sync.Once
	cliDir  string
	cliBin  string
	cliErr  error
)

// buildCLI returns the leakbench binary for a subprocess test.
func buildCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		if p := os.Getenv("LEAKBENCH_BINARY"); p != "" {
			cliBin = p
			return
		}
		if cliDir, cliErr = os.MkdirTemp("", "leakbench-cli-test-"); cliErr != nil {
			return
		}
		cliBin = filepath.Join(cliDir, "leakbench")
		if out, err := exec.Command("go", "build", "-o", cliBin, ".").CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("build leakbench: %w\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliBin
}

func stackDirs(t *testing.T) map[string]bool {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "leakbench-stack-*"))
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, d := range m {
		set[d] = true
	}
	return set
}

// ownedBy reports whether the stack directory's owner file names pid.
func ownedBy(dir string, pid int) bool {
	raw, err := os.ReadFile(filepath.Join(dir, "owner.pid"))
	if err != nil {
		return false
	}
	owner, _, _ := strings.Cut(strings.TrimSpace(string(raw)), ":")
	return owner == strconv.Itoa(pid)
}

// processesMentioning lists pids whose command line contains s.
func processesMentioning(s string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(raw), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// longScenario runs far longer than the test waits: it must be interrupted.
const longScenario = `
stack:
  idle_in_transaction_session_timeout: 5s
  users: 10
scenarios:
  agents:
    executor: constant-vus
    vus: 10
    duration: 60s
    gracefulStop: 1s
    flow:
      - think: 100ms
      - tools/call: { name: get_team_tools }
`

// TestSignalStopsRunCleanly interrupts a run mid-load with SIGINT and with
// SIGTERM: leakbench must exit 130, leave no PostgreSQL, PgBouncer or temp
// directory behind, and leave a run directory that says it was interrupted.
func TestSignalStopsRunCleanly(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	if testing.Short() {
		t.Skip("integration test: starts a local stack")
	}
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Missing(t, "go toolchain not on PATH")
	}
	bin := buildCLI(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			before := stackDirs(t)
			out := filepath.Join(t.TempDir(), "run")
			scenario := filepath.Join(t.TempDir(), "long.yaml")
			if err := os.WriteFile(scenario, []byte(longScenario), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--env", "local", "--variant", "commit-in-finally", "--out", out, "--scenario", scenario)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the load is running, then signal.
			sc := bufio.NewScanner(stderr)
			started := false
			var seen []string
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if strings.Contains(sc.Text(), "elapsed") {
					started = true
					break
				}
			}
			if !started {
				cmd.Process.Kill()
				cmd.Wait()
				if strings.Contains(strings.Join(seen, "\n"), "missing program") {
					testenv.Missing(t, "PostgreSQL or PgBouncer not installed (make deps)")
				}
				t.Fatalf("load never started; stderr:\n%s", strings.Join(seen, "\n"))
			}
			// Other test packages start stacks of their own at the same
			// time; only the directory this leakbench owns is its own.
			var newDirs []string
			for d := range stackDirs(t) {
				if !before[d] && ownedBy(d, cmd.Process.Pid) {
					newDirs = append(newDirs, d)
				}
			}
			go io.Copy(io.Discard, stderr)
			sent := time.Now()
			_ = cmd.Process.Signal(sig)
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
				t.Fatalf("exit after %s: %v, want exit code %d", sig, err, exitInterrupted)
			}
			t.Logf("stopped %s after the signal", time.Since(sent).Round(time.Millisecond))
			if len(newDirs) == 0 {
				t.Fatalf("could not see the run's stack directory")
			}
			for _, d := range newDirs {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("stack directory %s left behind", d)
				}
				if pids := processesMentioning(d); len(pids) > 0 {
					t.Errorf("processes of the stack still running: %v", pids)
				}
			}
			raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatalf("interrupted run has no summary.json: %v", err)
			}
			var sum struct {
				EndReason string `json:"end_reason"`
			}
			if err := json.Unmarshal(raw, &sum); err != nil || sum.EndReason != "interrupted" {
				t.Fatalf("summary end_reason = %q (err %v), want interrupted", sum.EndReason, err)
			}
		})
	}
}

// TestUsageErrors: refused command lines exit 2 (or 1 when the run could
// not be done) with their reason, in-process.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nope"}, exitUsage, "unknown command"},
		{[]string{"signoff"}, exitUsage, "--out DIR is required"},
		{[]string{"signoff", "--out", "x", "--variant-before", "leak-now"}, exitUsage, "unknown gateway variant"},
		{[]string{"run", "--out", "x", "--profile", "huge"}, exitUsage, "unknown profile"},
		{[]string{"run", "--out", "x", "--scenario", "/nonexistent.yaml"}, exitUsage, "read scenario file"},
		{[]string{"compare", "a"}, exitUsage, "BEFORE_DIR AFTER_DIR"},
		{[]string{"report", t.TempDir()}, exitRunFailed, "not a leakbench run directory"},
		{[]string{"gateway"}, exitUsage, "--dsn"},
		{[]string{"signoff", "--out", "x", "--shards", "3", "--env", "local"}, exitUsage, "add --env docker"},
		{[]string{"run", "--out", "x", "--shards", "2"}, exitUsage, "add --env docker"},
		{[]string{"run", "--out", "x", "--env", "local", "--fault-link", "db=127.0.0.1:16432=127.0.0.1:6432"}, exitUsage, "belong to --env external"},
		{[]string{"run", "--out", "x", "--target", "http://127.0.0.1:1/mcp", "--fault-link", "db=127.0.0.1:16432"}, exitUsage, "want NAME=LISTEN=UPSTREAM"},
		{[]string{"signoff", "--out", "x", "--shards", "-2", "--env", "docker"}, exitUsage, "2 or more"},
		{[]string{"gateway", "--dsn", "postgres://app:pw@127.0.0.1:1/app", "--request-timeout", "soon"}, exitUsage, "request-timeout"},
		{[]string{"gateway", "--dsn", "postgres://app:pw@127.0.0.1:1/app", "--request-timeout", "-1s"}, exitRunFailed, "must not be negative"},
		{[]string{"signoff", "--out", "x", "--env", "external"}, exitUsage, "starts its own stacks"},
		{[]string{"signoff", "--out", "x", "--profile", "all", "--variant-before", "fixed"}, exitUsage, "each pattern's own variants"},
		{[]string{"signoff", "--out", "x", "--profile", "all", "--history", "h"}, exitUsage, "record one sign-off"},
		{[]string{"signoff", "--out", "x", "--profile", "all", "--capacity"}, exitUsage, "searches one profile's pair"},
		{[]string{"signoff", "--out", "x", "--profile", "upstream", "--capacity"}, exitUsage, "--capacity with profile upstream"},
		{[]string{"signoff", "--out", "x", "--profile", "incident", "--capacity"}, exitUsage, "steps a constant-vus scenario"},
		{[]string{"run", "--out", "x", "--env", "external"}, exitUsage, "--target"},
		{[]string{"run", "--out", "x", "--env", "local", "--target", "http://127.0.0.1:1/mcp"}, exitUsage, "belong to --env external"},
		{[]string{"run", "--out", "x", "--target", "http://127.0.0.1:1/mcp", "--metrics-url", "http://127.0.0.1:1/metrics"}, exitUsage, "need a probe DSN"},
	}
	// In-process, each in a directory of its own: a relative --out must
	// not land in the source tree, and a refused command writes nothing.
	t.Setenv("LEAKBENCH_GATEWAY_DSN", "")
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			code, stdout, stderr := runCLI(t, nil, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; output:\n%s%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Fatalf("stderr lacks %q:\n%s", tt.want, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused command left its --out behind (stat err %v)", err)
			}
		})
	}
}

// TestFailedProbeLeavesNoOutput: a probe that cannot start leaves no empty
// --out behind that could pass for a result, and never prints the password.
func TestFailedProbeLeavesNoOutput(t *testing.T) {
	bin := buildCLI(t)
	out := filepath.Join(t.TempDir(), "probe")
	cmd := exec.Command(bin, "probe", "--dsn", "postgres://u:hunter2@127.0.0.1:1/x", "--duration", "1s", "--out", out)
	msg, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("probe of a closed port: err %v, want a non-zero exit; output:\n%s", err, msg)
	}
	if strings.Contains(string(msg), "hunter2") {
		t.Errorf("the DSN password was printed:\n%s", msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed probe left %s behind (stat err %v)", out, err)
	}
}

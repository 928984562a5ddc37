package probes

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Environment of the child process testKilledRun starts and kills.
const (
	childDSNEnv = "LEAKBENCH_PROBE_TEST_CHILD_DSN"
	childDirEnv = "LEAKBENCH_PROBE_TEST_CHILD_DIR"
)

// TestKilledRunChild is not a test of its own: testKilledRun runs the test
// binary again with only this test, which probes until it is killed.
func TestKilledRunChild(t *testing.T) {
	dsn, dir := os.Getenv(childDSNEnv), os.Getenv(childDirEnv)
	if dsn == "" || dir == "" {
		t.Skip("child process of testKilledRun")
	}
	p, err := Start(context.Background(), Config{DSN: dsn, RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	os.Stdout.WriteString("probing\n")
	time.Sleep(30 * time.Second) // the parent kills us long before
}

// testKilledRun kills a probing process with SIGKILL at an arbitrary
// instant: every complete line it wrote parses, and the samples reach to
// within a second of the kill.
func testKilledRun(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDSNEnv+"="+env.ProbeDSN, childDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "probing" {
				started <- true
			}
		}
		close(started)
	}()
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("child exited before probing")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("child did not start probing")
	}
	s := openIdleSession(t, ctx, env, observer)
	commitAfter(t, ctx, observer, s, 300*time.Millisecond)
	time.Sleep(1234 * time.Millisecond) // not a multiple of anything
	killedAt := time.Now()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL, by pid
		t.Fatal(err)
	}
	_ = cmd.Wait()

	samples := readJSONL[rundir.Sample](t, filepath.Join(dir, rundir.SamplesFile))
	eps := readJSONL[rundir.Episode](t, filepath.Join(dir, rundir.EpisodesFile))
	// About 16 ticks at 100 ms; a busy machine may make a few samples
	// slow enough to skip ticks.
	if len(samples) < 8 {
		t.Fatalf("%d samples before the kill; want ≥ 8", len(samples))
	}
	if last := samples[len(samples)-1].Time; killedAt.Sub(last) > time.Second {
		t.Errorf("last sample at %s, killed at %s: more than a second lost", last, killedAt)
	}
	if len(eps) != 1 || eps[0].PID != s.pid || eps[0].EndReason != rundir.EndReleased {
		t.Errorf("episodes %+v; want the one released before the kill", eps)
	}
	cfg, _ := pgx.ParseConfig(env.ProbeDSN)
	for _, f := range []string{rundir.SamplesFile, rundir.EpisodesFile} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(b), cfg.Password) {
			t.Errorf("%s holds the DSN's password", f)
		}
	}
}

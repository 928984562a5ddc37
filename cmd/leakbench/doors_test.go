package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// doorsScenario is a short healthy load on the Python service: fewer
// users than its pool, each starting a short run and waiting for it.
const doorsScenario = `probe: {interval: 200ms, stuck_after: 1s, drain: 1s}
timeout: 10s
protocolVersion: auto
seed: 1
scenarios:
  waiters:
    executor: constant-vus
    vus: 4
    duration: ${SECONDS:-4s}
    gracefulStop: 3s
    flow:
      - tools/call: { name: start_run, arguments: { seconds: 1 }, capture: { run: structuredContent.run_id } }
      - tools/call: { name: wait_for_run, arguments: { run_id: "{{vars.run}}", seconds: 2 } }
      - think: 200ms
`

// TestOwnServiceDoors: the own-service doors on a service leakbench did
// not start — the Python example's fixed build on a real PostgreSQL,
// probed through the shared flags: run --target --probe-dsn-file twice,
// the second judged against the first (--baseline); signoff of its leaky
// build (held-while-waiting) before and the fixed one after, --mode fix,
// the sides sharing the probe flags; soak --target with -e for the
// scenario's length. Each door is about 15 s; they run side by side, each
// on a database and a service of its own, so that no door's probe sees
// another's sessions (the leaky build's held ones above all).
func TestOwnServiceDoors(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	if testing.Short() {
		t.Skip("integration test: the Python service on a local PostgreSQL")
	}
	if _, err := pyservice.Check(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	// Not deferred: the doors run after this function returns.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	env := fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
	noEnv := map[string]string{}

	t.Run("run --baseline", func(t *testing.T) {
		t.Parallel()
		d := startDoor(t, ctx, env, "door_baseline")
		dir, own := d.dir, d.own
		base, again := filepath.Join(dir, "base"), filepath.Join(dir, "again")
		if code, _, stderr := runCLI(t, noEnv, append([]string{"run", "--quiet", "--out", base}, own...)...); code != exitOK {
			t.Fatalf("the baseline run: exit %d\n%s", code, stderr)
		}
		code, stdout, stderr := runCLI(t, noEnv, append([]string{"run", "--out", again, "--baseline", base}, own...)...)
		if code != exitOK || !strings.Contains(stdout, "baseline report:") {
			t.Fatalf("a healthy run against its own baseline: exit %d\n%s\n%s", code, stdout, stderr)
		}
		var sum struct {
			Probe *struct {
				Samples int `json:"samples"`
			} `json:"probe"`
		}
		raw, err := os.ReadFile(filepath.Join(again, "summary.json"))
		if err == nil {
			err = json.Unmarshal(raw, &sum)
		}
		if err != nil || sum.Probe == nil || sum.Probe.Samples == 0 {
			t.Errorf("the run was not probed (%v): %s", err, raw)
		}
	})

	t.Run("signoff --before-target --after-target --mode fix", func(t *testing.T) {
		t.Parallel()
		d := startDoor(t, ctx, env, "door_signoff")
		dir, svc := d.dir, d.svc
		leaky, err := pyservice.Start(context.Background(), pyservice.Options{DSN: d.dsn, Variant: pyservice.HeldWhileWaiting, PoolSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := leaky.Close(); err != nil {
				t.Error(err)
			}
		}()
		out := filepath.Join(dir, "signoff")
		// The sides share the probe DSN and tokens (--probe-dsn-file,
		// --tokens-file); each has its own target and name.
		code, stdout, stderr := runCLI(t, noEnv, "signoff", "--out", out, "--mode", "fix",
			"--before-target", leaky.URL, "--before-name", "main", "--after-target", svc.URL, "--after-name", "pr",
			"--tokens-file", filepath.Join(dir, "tokens"), "--probe-dsn-file", filepath.Join(dir, "dsn"), "--scenario", filepath.Join(dir, "s.yaml"))
		if code != exitOK {
			t.Fatalf("signoff of the leaky and the fixed build: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})

	t.Run("soak --target", func(t *testing.T) {
		t.Parallel()
		d := startDoor(t, ctx, env, "door_soak")
		dir, own := d.dir, d.own
		out := filepath.Join(dir, "soak")
		code, _, stderr := runCLI(t, noEnv, append([]string{"soak", "--quiet", "--out", out, "-e", "SECONDS=10s",
			"--baseline", "1s", "--warmup", "2s", "--cool-down", "3s", "--min-points", "5"}, own...)...)
		// A soak this short may not judge every resource; what matters
		// here is that it soaked this service with its probes.
		if code != exitOK && code != exitVerdict {
			t.Fatalf("soak --target: exit %d\n%s", code, stderr)
		}
		raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil || !strings.Contains(string(raw), `"soak"`) || !strings.Contains(string(raw), `"external"`) {
			t.Errorf("no soak of the external service in summary.json (%v): %.400s", err, raw)
		}
	})
}

// door is one door's own service: the Python example's fixed build on a
// database of its own, and the files and flags that point leakbench at it.
type door struct {
	svc *pyservice.Service
	dsn string   // the service's own DSN (another build may share it)
	dir string   // tokens, dsn and s.yaml, and the door's output
	own []string // --target … --tokens-file … --probe-dsn-file … --scenario …
}

func startDoor(t *testing.T, ctx context.Context, env *fixtures.Env, name string) door {
	t.Helper()
	db, err := pyservice.SeedDatabase(ctx, env.PostgresDSN, env.ProbeDSN, name, 10)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := pyservice.Start(context.Background(), pyservice.Options{DSN: db.DSN, Variant: pyservice.Fixed, PoolSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	files := map[string]string{"tokens": strings.Join(db.Tokens, "\n") + "\n", "dsn": db.ProbeDSN + "\n", "s.yaml": doorsScenario}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	own := []string{"--target", svc.URL, "--tokens-file", filepath.Join(dir, "tokens"), "--probe-dsn-file", filepath.Join(dir, "dsn"), "--scenario", filepath.Join(dir, "s.yaml")}
	return door{svc: svc, dsn: db.DSN, dir: dir, own: own}
}

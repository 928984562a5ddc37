package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

const shardsProfile = `
stack: {idle_in_transaction_session_timeout: 5s, users: 6}
probe: {interval: 200ms, stuck_after: 2s, drain: 0s}
timeout: 5s
scenarios:
  a:
    executor: constant-vus
    vus: 4
    duration: 6s
    flow:
      - think: 50ms
      - tools/call: {name: get_team_tools}
thresholds:
  mcp_req_failed: ["rate<0.05"]
`

// TestDockerShards plays a plan as two leakbench containers on the docker
// stack's network while this process probes: the run directory holds the
// merged load — both shards' users, each once, in the request index — the
// thresholds judged on it, and the probe's samples; nothing of the shards
// is left behind. The plan reads a data file on this machine, which the
// containers get with the plan: each user records its row's note.
func TestDockerShards(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a docker stack and two shard containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := fixtures.DockerAvailable(ctx); err != nil {
		testenv.Missing(t, "no Docker engine answers: %v", err)
	}
	dataDir := t.TempDir()
	mcptest.WriteUsersCSV(t, dataDir, 4)
	withData := strings.Replace(shardsProfile, "      - tools/call: {name: get_team_tools}\n",
		"      - tools/call: {name: get_team_tools}\n      - tools/call: {name: record_note, arguments: {note: \"{{data.email}}\"}}\n", 1)
	p, err := profiles.Parse([]byte("data: {file: users.csv, mode: unique}\n"+withData), filepath.Join(dataDir, "shards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log strings.Builder
	sum, err := Run(ctx, Options{Profile: p, Variant: "fixed", Name: "sharded", Dir: dir, Env: "docker", Shards: 2, Log: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if sum.Load == nil || sum.Load.Requests < 20 {
		t.Fatalf("merged load: %+v", sum.Load)
	}
	if len(sum.Load.Thresholds) != 1 || !sum.Load.Thresholds[0].Pass {
		t.Errorf("thresholds on the merged load: %+v", sum.Load.Thresholds)
	}
	if sum.Probe == nil || sum.Probe.Samples < 10 {
		t.Errorf("the probe did not watch the sharded load: %+v", sum.Probe)
	}
	users := map[int]int{}
	var n int64
	for _, r := range readJSONLines[rundir.Request](t, filepath.Join(dir, rundir.RequestsFile)) {
		users[r.User]++
		n++
	}
	if len(users) != 4 || n != sum.Load.Requests {
		t.Errorf("request index: users %v, %d lines for %d requests; want users 0–3 of both shards", users, n, sum.Load.Requests)
	}
	for _, f := range []string{rundir.SeriesFile, rundir.HistogramsFile, rundir.LoadFile, rundir.LoadHistogramsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("merged run lacks %s: %v", f, err)
		}
	}
	if !strings.Contains(log.String(), "2 shard containers") {
		t.Errorf("progress does not say the load was sharded:\n%s", log.String())
	}
}

// TestShardsNeedDocker: --shards on another provider is refused before
// anything starts.
func TestShardsNeedDocker(t *testing.T) {
	p, err := profiles.Parse([]byte(shardsProfile), "shards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	_, err = Run(context.Background(), Options{Profile: p, Variant: "fixed", Dir: dir, Env: "local", Shards: 2})
	if err == nil || !strings.Contains(err.Error(), "needs --env docker") {
		t.Fatalf("local with shards: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created its directory: %v", err)
	}
}

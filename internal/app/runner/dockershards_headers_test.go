package runner

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// headersScenario sends a credential-like header with every request: the
// plan's JSON masks its value in run directories, and the shards must get
// it as written.
const headersScenario = `
timeout: 5s
headers: {X-Api-Key: "k3y-0f-the-shards", X-Team: blue}
scenarios:
  a:
    executor: constant-vus
    vus: 2
    duration: 3s
    gracefulStop: 2s
    flow:
      - think: 100ms
      - tools/call: {name: echo, arguments: {text: hi}}
`

// TestDockerShardsSendSecretHeaders plays a plan whose headers include an
// X-Api-Key as two shard containers against an MCP server on this host
// that accepts only its bearer token: every request it received carries
// the header's exact value (not the run directory's mask), every shard
// request succeeded, and neither the run directory nor the log holds the
// value.
func TestDockerShardsSendSecretHeaders(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a docker stack and two shard containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := fixtures.DockerAvailable(ctx); err != nil {
		testenv.Missing(t, "no Docker engine answers: %v", err)
	}
	p, err := profiles.Parse([]byte(headersScenario), "headers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	env, err := fixtures.Start(ctx, stack.Config{Variant: "fixed", Users: 2}, fixtures.StartOptions{Provider: fixtures.ProviderDocker, Log: &log})
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("close the stack: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("start the stack: %v\n%s", err, log.String())
	}
	// The server listens on the stack network's gateway address: the
	// host as the shard containers reach it.
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", env.Docker().Network, "-f", "{{(index .IPAM.Config 0).Gateway}}").Output()
	if err != nil {
		t.Fatalf("docker network inspect: %v", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(strings.TrimSpace(string(out)), "0"))
	if err != nil {
		t.Fatalf("listen on the stack network's gateway %q: %v", out, err)
	}
	const token = "lbt_5ba4dc0ffee0123456789"
	srv := mcptest.Start(t, mcptest.Options{Listener: ln, Authorized: func(tok string) bool { return tok == token }})

	dir := t.TempDir()
	res, err := playShards(ctx, p.Plan, 2, env, srv.URL, []string{token}, dir, &log, "headers")
	if err != nil {
		t.Fatalf("shards: %v\n%s", err, log.String())
	}
	// Every JSON-RPC request carries the plan's headers (the preflight's
	// GET of the endpoint is not one).
	calls, seen := 0, map[string]int{}
	for _, r := range srv.Requests() {
		if r.Method != "POST" {
			continue
		}
		seen[r.RPCMethod+" X-Api-Key: "+r.Header.Get("X-Api-Key")]++
		if r.RPCMethod == "tools/call" {
			calls++
		}
	}
	for k := range seen {
		if !strings.HasSuffix(k, "X-Api-Key: k3y-0f-the-shards") {
			t.Fatalf("requests arrived without the scenario's X-Api-Key: %v", seen)
		}
	}
	if res == nil || res.Requests == 0 || res.Failures != 0 || calls == 0 {
		t.Fatalf("merged load %+v, %d calls received; want them all to succeed", res, calls)
	}
	// The value never lands on the host: not in the run directory, not in
	// the log.
	if strings.Contains(log.String(), "k3y-0f-the-shards") {
		t.Errorf("the log holds the header's value:\n%s", log.String())
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if raw, err := os.ReadFile(path); err == nil && strings.Contains(string(raw), "k3y-0f-the-shards") {
			t.Errorf("%s holds the header's value", path)
		}
		return nil
	})
}

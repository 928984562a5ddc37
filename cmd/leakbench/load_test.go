package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// twoScenarios is a file of two scenarios, one of them with a ${KEY}.
const twoScenarios = `scenarios:
  browse: {executor: constant-vus, vus: 2, duration: 400ms, flow: [{tools/call: {name: echo, arguments: {text: "${WORD:-unset}"}}}, think: 20ms]}
  write: {executor: constant-vus, vus: 2, duration: 400ms, startTime: 5s, flow: [{tools/call: {name: echo, arguments: {text: y}}}, think: 20ms]}
`

// TestLoadFlagsUsageErrors: the load flags' mistakes are usage errors
// (exit 2) before any load, each naming what is wrong.
func TestLoadFlagsUsageErrors(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(two, []byte(twoScenarios), 0o644); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "unreadable.yaml")
	if err := os.Mkdir(unreadable, 0o755); err != nil { // a directory: not readable as a file
		t.Fatal(err)
	}
	tgt := "http://127.0.0.1:1/mcp"
	for _, tc := range []struct {
		cmd  func(context.Context, *cli, []string) error
		args []string
		want string
	}{
		{cmdRun, []string{"--target", tgt, "--scenario", two, "-e", "WORD"}, "no '='"},
		{cmdRun, []string{"--target", tgt, "--scenario", filepath.Join(dir, "missing.yaml")}, "read scenario file"},
		{cmdRun, []string{"--target", tgt, "--scenario", unreadable}, "--scenario"},
		{cmdRun, []string{"--target", tgt, "--scenario", two, "--vus", "3"}, "--scenario-name"},
		{cmdRun, []string{"--target", tgt, "--scenario", two, "--scenario-name", "nope"}, "no scenario \"nope\""},
		{cmdRun, []string{"--target", tgt, "--scenario", two, "--scenario-name", "browse", "--vus", "-1"}, "--vus"},
		{cmdRun, []string{"--target", tgt, "-e", "A=b"}, "-e fills a scenario file"},
		{cmdSignoff, []string{"--scenario", two, "--duration", "1s"}, "--scenario-name"},
		{cmdSignoff, []string{"--profile", "all", "--vus", "2"}, "--vus"},
		{cmdSoak, []string{"--iterations", "3"}, "-iterations"},
		{cmdCapacity, []string{"--vus", "3"}, "-vus"},
		{cmdCapacity, []string{"--scenario", filepath.Join(dir, "missing.yaml")}, "read scenario file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := tc.cmd(context.Background(), testCLI(), append([]string{"--out", filepath.Join(dir, "out")}, tc.args...))
			if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want a usage error with %q", err, tc.want)
			}
		})
	}
}

// TestRunLoadFlags: --scenario-name picks one scenario of a file, --vus
// and --duration reshape it, and -e fills its ${KEY}: the run plays
// exactly that (the recorded plan and load say so).
func TestRunLoadFlags(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(two, []byte(twoScenarios), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	err := cmdRun(context.Background(), testCLI(), []string{"--target", target, "--scenario", two, "--scenario-name", "browse",
		"--vus", "3", "--duration", "700ms", "-e", "WORD=hello", "--out", out})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Load struct {
			Config struct {
				Users    int `json:"users"`
				Duration any `json:"duration"`
			} `json:"config"`
			Plan json.RawMessage `json:"plan"`
		} `json:"load"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	plan := string(sum.Load.Plan)
	if sum.Load.Config.Users != 3 || strings.Contains(plan, "write") || !strings.Contains(plan, "hello") {
		t.Errorf("users %d; plan %s", sum.Load.Config.Users, plan)
	}
}

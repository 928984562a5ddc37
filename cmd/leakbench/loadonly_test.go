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

// TestRunLoadOnly: `run --target URL --scenario FILE --out DIR` with no
// database plays the load and writes a run directory and report without
// probe sections; the thresholds decide the exit code; a target that is
// not there is exit 1 with one message, not a verdict.
func TestRunLoadOnly(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	scen := func(threshold string) string {
		p := filepath.Join(dir, threshold+".yaml")
		body := "scenarios:\n  s: {executor: constant-vus, vus: 3, duration: 600ms, flow: [ping, {tools/call: {name: echo, arguments: {text: x}}}, think: 20ms]}\nthresholds:\n  mcp_req_failed: ['rate<0.01']\n  mcp_reqs: ['count" + threshold + "']\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "pass")
	if err := cmdRun(context.Background(), isolatedCLI(), []string{"--target", target, "--scenario", scen(">1"), "--out", out}); err != nil {
		t.Fatalf("passing thresholds: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum["probe"] != nil || sum["end_reason"] != "completed" || sum["environment"].(map[string]any)["load_only"] != true {
		t.Errorf("summary: probe %v end %v environment %v", sum["probe"], sum["end_reason"], sum["environment"])
	}
	for _, f := range []string{"report.md", "report.html", "junit.xml", "load.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	junit, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
	if strings.Contains(string(junit), "probe recorded samples") {
		t.Errorf("junit.xml fails a probe check of a run that has no probe:\n%s", junit)
	}
	if len(md) == 0 {
		t.Error("empty report.md")
	}

	err = cmdRun(context.Background(), isolatedCLI(), []string{"--target", target, "--scenario", scen("<1"), "--out", filepath.Join(dir, "fail")})
	if !errors.Is(err, errVerdict) || !strings.Contains(err.Error(), "mcp_reqs") {
		t.Fatalf("failing threshold: %v, want the verdict (99)", err)
	}

	down := "http://" + mcptest.RefusedAddr(t) + "/mcp"
	err = cmdRun(context.Background(), isolatedCLI(), []string{"--target", down, "--scenario", scen(">1"), "--out", filepath.Join(dir, "down")})
	if err == nil || errors.Is(err, errVerdict) || errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("unreachable target: %v", err)
	}
	if strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("not one line: %q", err)
	}
}

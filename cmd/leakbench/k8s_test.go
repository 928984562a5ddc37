package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestK8s: leakbench k8s renders a profile file's manifests to --out;
// missing flags and a bad scenario are usage errors.
func TestK8s(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.yaml")
	prof := filepath.Join("..", "..", "scenarios", "profiles", "ci.yaml")
	err := cmdK8s(context.Background(), []string{"--shards", "4", "--scenario", prof, "--target", "http://gw:8080/mcp",
		"--image", "reg/leakbench:1", "--name", "ci-load", "--start-at", "2026-12-01T10:00:00Z", "--out", out})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"completionMode: Indexed", "completions: 4", "parallelism: 4", "$(JOB_COMPLETION_INDEX)/4",
		`"2026-12-01T10:00:00Z"`, "name: ci-load-merge", "claimName: ci-load-results"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("scenarios: {s: {executor: nope, flow: [ping]}}\n"), 0o644)
	if err := cmdK8s(context.Background(), []string{"--shards", "4", "--scenario", bad, "--target", "http://gw/mcp", "--image", "i",
		"--out", filepath.Join(dir, "x.yaml")}); err == nil || !strings.Contains(err.Error(), "unknown executor") {
		t.Errorf("bad scenario: %v", err)
	}
	for _, args := range [][]string{
		{"--shards", "4", "--scenario", prof, "--target", "http://gw/mcp"}, // no image
		{"--shards", "0", "--scenario", prof, "--target", "http://gw/mcp", "--image", "i"},
		{"--shards", "1001", "--scenario", prof, "--target", "http://gw/mcp", "--image", "i"},
	} {
		if err := cmdK8s(context.Background(), append(args, "--out", filepath.Join(dir, "x.yaml"))); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

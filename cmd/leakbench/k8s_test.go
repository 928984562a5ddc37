package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// TestK8s: leakbench k8s renders a profile file's manifests to --out;
// missing flags and a bad scenario are usage errors.
func TestK8s(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.yaml")
	prof := filepath.Join("..", "..", "scenarios", "profiles", "ci.yaml")
	err := cmdK8s(context.Background(), testCLI(), []string{"--shards", "4", "--scenario", prof, "--target", "http://gw:8080/mcp",
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
	if err := cmdK8s(context.Background(), testCLI(), []string{"--shards", "4", "--scenario", bad, "--target", "http://gw/mcp", "--image", "i",
		"--out", filepath.Join(dir, "x.yaml")}); err == nil || !strings.Contains(err.Error(), "unknown executor") {
		t.Errorf("bad scenario: %v", err)
	}
	for _, args := range [][]string{
		{"--shards", "4", "--scenario", prof, "--target", "http://gw/mcp"}, // no image
		{"--shards", "0", "--scenario", prof, "--target", "http://gw/mcp", "--image", "i"},
		{"--shards", "1001", "--scenario", prof, "--target", "http://gw/mcp", "--image", "i"},
	} {
		if err := cmdK8s(context.Background(), testCLI(), append(args, "--out", filepath.Join(dir, "x.yaml"))); !errors.Is(err, cliflag.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestK8sRefusesSecrets: leakbench k8s refuses a scenario with inline
// tokens and a --run-arg DSN with a password — a usage error saying which
// Secret to use, the secret quoted nowhere, no manifest file written — and
// renders the same scenario mounted from --scenario-secret.
func TestK8sRefusesSecrets(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("tokens: [lbt_0123456789abcdef]\nscenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.yaml")
	args := []string{"--shards", "2", "--scenario", scen, "--target", "https://gw/mcp", "--image", "i", "--out", out}
	for _, tc := range []struct {
		extra        []string
		secret, want string
	}{
		{nil, "lbt_0123456789abcdef", "--tokens-secret"},
		{[]string{"--scenario-secret", "s", "--run-arg=--probe-dsn=postgres://mon:pgpw@db/app"}, "pgpw", "--env-secret"},
		{[]string{"--scenario-secret", "s", "--target", "https://ci:hunter2@gw/mcp"}, "hunter2", "--target"},
	} {
		err := cmdK8s(context.Background(), testCLI(), append(slices.Clone(args), tc.extra...))
		if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.secret) {
			t.Errorf("%q: %v, want a usage error naming %s, not quoting the secret", tc.extra, err, tc.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%q: a refused render left %s: %v", tc.extra, out, err)
		}
	}
	if err := cmdK8s(context.Background(), testCLI(), append(args, "--scenario-secret", "s-scenario")); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil || strings.Contains(string(raw), "lbt_0123456789abcdef") || !strings.Contains(string(raw), "secretName: s-scenario") {
		t.Errorf("manifests with --scenario-secret (%v):\n%s", err, raw)
	}
}

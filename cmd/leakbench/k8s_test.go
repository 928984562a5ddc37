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

// TestK8sCarriesDataFiles: leakbench k8s reads the scenario's data file
// from beside the scenario and renders it into the data ConfigMap,
// mounted at the path the scenario gives; a data file outside the
// scenario's folder is a usage error naming it, with no file written.
func TestK8sCarriesDataFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scen", "rows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scen", "rows", "users.csv"), []byte("email\na@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const flow = "scenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n"
	scen := filepath.Join(dir, "scen", "s.yaml")
	if err := os.WriteFile(scen, []byte("data: rows/users.csv\n"+flow), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.yaml")
	if err := cmdK8s(context.Background(), testCLI(), []string{"--shards", "2", "--scenario", scen, "--target", "http://gw:8080/mcp",
		"--image", "i", "--out", out}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// "email\na@example.com\n" in base64, and its place in the pods.
	for _, want := range []string{"name: leakbench-data", "data-0: ZW1haWwKYUBleGFtcGxlLmNvbQo=", "path: rows/users.csv", "projected:"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("manifests lack %q:\n%s", want, raw)
		}
	}
	outside := filepath.Join(dir, "outside.yaml")
	if err := os.WriteFile(outside, []byte("data: scen/rows/users.csv\n"+flow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scen", "up.yaml"), []byte("data: ../scen/rows/users.csv\n"+flow), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(dir, "refused.yaml")
	err = cmdK8s(context.Background(), testCLI(), []string{"--shards", "2", "--scenario", filepath.Join(dir, "scen", "up.yaml"),
		"--target", "http://gw/mcp", "--image", "i", "--out", refused})
	if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), "data file ../scen/rows/users.csv") {
		t.Errorf("a data file outside the scenario's folder: %v, want a usage error naming it", err)
	}
	if _, err := os.Stat(refused); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused render wrote %s (%v)", refused, err)
	}
	// The same file, inside the folder of a scenario one level up: fine.
	if err := cmdK8s(context.Background(), testCLI(), []string{"--shards", "2", "--scenario", outside, "--target", "http://gw/mcp",
		"--image", "i", "--out", filepath.Join(dir, "ok.yaml")}); err != nil {
		t.Errorf("a data file below the scenario's folder: %v", err)
	}
}

package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestTargetSecretQueryParameterStaysOut: a secret query parameter of
// --target (api_key=…) reaches the service but no file of the run
// directory: not summary.json's recorded plan or config, not the shard
// series (series.json), not the report (#26).
func TestTargetSecretQueryParameterStaysOut(t *testing.T) {
	const secret = "k-7f3a9c-secret"
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL + "?api_key=" + secret
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	body := "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 400ms, flow: [{tools/call: {name: echo, arguments: {text: x}}}, think: 20ms]}\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	out := filepath.Join(dir, "run")
	if err := cmdRun(context.Background(), testCLI(), []string{"--target", target, "--scenario", scen, "--out", out}); err != nil {
		t.Fatalf("run: %v", err)
	}
	files := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(raw), secret) {
			t.Errorf("%s holds the target's api_key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The run did reach the target through its query (the masked value
	// is recorded in its place), and there were files to look in.
	if files < 5 || !strings.Contains(string(sum), "api_key=xxxxx") {
		t.Errorf("%d files; summary.json without the masked target:\n%s", files, sum)
	}
}

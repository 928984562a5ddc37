package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestRunWorkersReadTheDataFile: run --workers 2 with a data file beside
// the scenario (a relative path, the working directory elsewhere) sends
// every row of a unique file exactly once — the workers read the file
// themselves, and each user's row is that of its place in the whole
// plan, as in one process.
func TestRunWorkersReadTheDataFile(t *testing.T) {
	t.Parallel() // its own server and files
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	dir := t.TempDir()
	mcptest.WriteUsersCSV(t, dir, 6)
	scen := filepath.Join(dir, "s.yaml")
	body := "data: { file: users.csv, mode: unique }\nscenarios:\n  s: {executor: per-vu-iterations, vus: 6, iterations: 1, flow: [{tools/call: {name: echo, arguments: {text: '{{data.email}}'}}}]}\nthresholds:\n  mcp_req_failed: ['rate==0']\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := cmdRun(context.Background(), isolatedCLI(), []string{"--target", srv.URL, "--scenario", scen, "--workers", "2", "--out", out}); err != nil {
		t.Fatalf("run --workers 2 with a data file: %v", err)
	}
	sent := srv.CallTexts()
	for i := range 6 {
		if got := sent[fmt.Sprintf("u%d@x.org", i)]; got != 1 {
			t.Errorf("row %d sent %d times, want once: %v", i, got, sent)
		}
	}
}

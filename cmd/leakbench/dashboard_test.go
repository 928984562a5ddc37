package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestRunDashboard: `run --dashboard=ADDR --dashboard-export FILE` plays
// the load with the page up and writes the final page, with the load's
// points and the report's link; a bad address is refused before any load
// (no run directory is written).
func TestRunDashboard(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 2200ms, flow: [ping, think: 20ms]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(out string, extra ...string) error {
		return cmdRun(context.Background(), isolatedCLI(), append([]string{"--target", target, "--scenario", scen, "--out", filepath.Join(dir, out)}, extra...))
	}

	export := filepath.Join(dir, "dash.html")
	if err := run("ok", "--dashboard=127.0.0.1:0", "--dashboard-export", export); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"load":{"users":2`, `"report":"report/report.html"`, `"done":true`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the exported page lacks %s", want)
		}
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		args []string
		want error
		says string
	}{
		{"not loopback", []string{"--dashboard=0.0.0.0:5665"}, dashboard.ErrNotLoopback, "--dashboard-token-file"},
		{"in use", []string{"--dashboard=" + busy.Addr().String()}, dashboard.ErrAddrInUse, busy.Addr().String()},
		{"export alone", []string{"--dashboard-export", export}, cliflag.ErrUsage, "belong to --dashboard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.name, tc.args...)
			if !errors.Is(err, tc.want) || !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v: want %v (a usage error) saying %q", err, tc.want, tc.says)
			}
			if _, err := os.Stat(filepath.Join(dir, tc.name)); !os.IsNotExist(err) {
				t.Errorf("a run directory was written: %v", err)
			}
		})
	}
}

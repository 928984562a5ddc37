package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestScaleCommand: `leakbench scale` raises a running externally-
// controlled scenario through its dashboard; the change is in
// summary.json and load.jsonl by "command"; one above maxVUs is refused
// with the reason; missing flags are usage errors.
func TestScaleCommand(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("scenarios:\n  s: {executor: externally-controlled, vus: 1, maxVUs: 4, duration: 3s, flow: [ping, think: 20ms]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("0123456789abcdef-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a free port for the dashboard
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := filepath.Join(dir, "run")
	done := make(chan error, 1)
	go func() {
		done <- cmdRun(context.Background(), isolatedCLI(), []string{"--target", target, "--scenario", scen, "--out", out,
			"--dashboard=" + addr, "--dashboard-token-file", tokFile})
	}()
	scale := func(args ...string) error {
		return cmdScale(context.Background(), isolatedCLI(), append([]string{"--addr", addr, "--token-file", tokFile}, args...))
	}
	// Until the load starts the dashboard has nothing to scale.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := scale("--vus", "3")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scale never went through: %v", err)
		}
	}
	if err := scale("--vus", "9"); !errors.Is(err, dashboard.ErrRefused) || !strings.Contains(err.Error(), "maxVUs (4)") {
		t.Errorf("--vus 9: %v, want a refusal naming maxVUs", err)
	}
	for _, args := range [][]string{{"--vus", "2", "--token-file", ""}, {}} {
		if err := cmdScale(context.Background(), isolatedCLI(), append([]string{"--addr", addr}, args...)); !errors.Is(err, cliflag.ErrUsage) {
			t.Errorf("scale %q: %v, want a usage error", args, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Load struct {
			ScaleChanges []rundir.ScaleChange `json:"scale_changes"`
			PeakUsers    int                  `json:"peak_users"`
		} `json:"load"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if c := sum.Load.ScaleChanges; len(c) != 1 || c[0].From != 1 || c[0].To != 3 || c[0].By != "command" || sum.Load.PeakUsers != 3 {
		t.Errorf("summary.json: changes %+v, peak %d users", c, sum.Load.PeakUsers)
	}
	load, _ := os.ReadFile(filepath.Join(out, rundir.LoadFile))
	if !strings.Contains(string(load), `"scale":[{`) {
		t.Error("load.jsonl records no change")
	}
}

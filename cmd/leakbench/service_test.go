package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// TestServiceFlagsAreShared: every command that loads or probes a service
// defines the own-service flags under the same names with the same help;
// the older spellings are accepted but left out of help.
func TestServiceFlagsAreShared(t *testing.T) {
	load := []string{"target", "tokens-file", "metrics-url", "probe-dsn", "probe-dsn-file", "pgbouncer-admin-dsn", "pgbouncer-admin-dsn-file",
		"ca-file", "insecure-skip-verify", "oauth-token-url", "oauth-client-id", "oauth-client-secret", "oauth-scopes", "oauth-audience", "oauth-token-per-user"}
	usage := map[string]string{}
	for _, tc := range []struct {
		cmd   string
		parts serviceParts
	}{
		{"run", serviceParts{load: true, name: true}}, {"capacity", serviceParts{load: true, name: true}},
		{"soak", serviceParts{load: true}}, {"signoff", serviceParts{load: true}}, {"probe", serviceParts{}},
	} {
		fs := flag.NewFlagSet(tc.cmd, flag.ContinueOnError)
		addServiceFlags(testCLI(), fs, tc.parts)
		names := []string{"probe-dsn", "pgbouncer-admin-dsn"}
		if tc.parts.load {
			names = load
		}
		for _, n := range names {
			f := fs.Lookup(n)
			if f == nil {
				t.Errorf("%s: no --%s", tc.cmd, n)
				continue
			}
			if u, ok := usage[n]; ok && u != f.Usage {
				t.Errorf("%s --%s: help %q differs from another command's %q", tc.cmd, n, f.Usage, u)
			}
			usage[n] = f.Usage
		}
		var help strings.Builder
		printFlags(&help, fs)
		for _, alias := range []string{"dsn", "pgbouncer", "scrape", "insecure"} {
			if strings.Contains(help.String(), "\n  --"+alias+" ") || strings.Contains(help.String(), "\n  --"+alias+"\n") || strings.Contains(help.String(), "\n  --"+alias+"\t") {
				t.Errorf("%s help shows the alias --%s:\n%s", tc.cmd, alias, help.String())
			}
		}
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := addServiceFlags(testCLI(), fs, serviceParts{load: true, name: true})
	if err := cliflag.Parse(fs, []string{"--dsn", "postgres://p@h/d", "--scrape", "http://h/metrics", "--insecure"}); err != nil {
		t.Fatal(err)
	}
	if dsn, _ := s.ProbeDSN.Value(); dsn != "postgres://p@h/d" || s.MetricsURL != "http://h/metrics" || !s.Conn.Insecure {
		t.Errorf("aliases: dsn %q metrics %q insecure %v", dsn, s.MetricsURL, s.Conn.Insecure)
	}
}

// TestSignoffSideFallsBack: a sign-off side's probe flags fall back to the
// shared ones; its own win.
func TestSignoffSideFallsBack(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	t.Setenv("LEAKBENCH_PGBOUNCER_ADMIN_DSN", "")
	fs := flag.NewFlagSet("signoff", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	shared := addServiceFlags(testCLI(), fs, serviceParts{load: true})
	before, after := addSideFlags(fs, "before-"), addSideFlags(fs, "after-")
	err := cliflag.Parse(fs, []string{"--probe-dsn", "postgres://shared@h/d", "--metrics-url", "http://h/m",
		"--before-target", "http://127.0.0.1:1/mcp", "--after-target", "http://127.0.0.1:2/mcp", "--after-probe-dsn", "postgres://after@h/d"})
	if err != nil {
		t.Fatal(err)
	}
	before.WithDefaults(shared)
	after.WithDefaults(shared)
	b, err := before.External(runnerTargetNone)
	if err != nil {
		t.Fatal(err)
	}
	a, err := after.External(runnerTargetNone)
	if err != nil {
		t.Fatal(err)
	}
	if b.ProbeDSN != "postgres://shared@h/d" || a.ProbeDSN != "postgres://after@h/d" || a.GatewayMetricsURL != "http://h/m" || b.GatewayURL != "http://127.0.0.1:1/mcp" {
		t.Errorf("before %+v\nafter %+v", b, a)
	}
}

// TestServiceUsageErrors: own-service mistakes are usage errors (exit 2)
// found before any load, each naming what is wrong.
func TestServiceUsageErrors(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	t.Setenv("LEAKBENCH_PGBOUNCER_ADMIN_DSN", "")
	dir := t.TempDir()
	scen := writeScenario(t, dir, "s", 2, "300ms")
	tgt, tgt2 := "http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"
	for _, tc := range []struct {
		cmd  func(context.Context, *cli, []string) error
		args []string
		want string
	}{
		{cmdRun, []string{"--target", tgt, "--scenario", scen, "--baseline", filepath.Join(dir, "nope")}, "--baseline"},
		{cmdRun, []string{"--target", tgt, "--scenario", scen, "--baseline", scen}, "not a run directory"},
		{cmdRun, []string{"--target", tgt, "--scenario", scen, "--regression-rule", "nonsense"}, "regression-rule"},
		{cmdRun, []string{"--env", "local", "--ca-file", "x.pem"}, "belong to --target"},
		{cmdRun, []string{"--target", tgt, "--scenario", scen, "--tokens-file", filepath.Join(dir, "none")}, "--tokens-file"},
		{cmdCapacity, []string{"--ca-file", "x.pem"}, "belong to --target"},
		{cmdCapacity, []string{"--target", tgt, "--scenario", scen, "--metrics-url", "http://h/m"}, "need a probe DSN"},
		{cmdSoak, []string{"--target", tgt}, "needs a probe DSN"},
		{cmdSoak, []string{"--target", tgt, "--variant", "fixed", "--probe-dsn", "postgres://p@h/d"}, "give one of them"},
		{cmdSoak, []string{"--probe-dsn", "postgres://p@h/d"}, "belong to --target"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt2}, "fix"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt2}, "regression"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt2, "--mode", "maybe"}, "--mode"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt + "/", "--mode", "fix"}, "same URL"},
		{cmdSignoff, []string{"--before-target", tgt, "--mode", "fix"}, "give both"},
		{cmdSignoff, []string{"--target", tgt, "--mode", "fix"}, "--before-target URL and --after-target URL"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt2, "--mode", "fix", "--variant-before", "fixed"}, "give one pair"},
		{cmdSignoff, []string{"--before-target", tgt, "--after-target", tgt2, "--mode", "fix", "--before-metrics-url", "http://h/m"}, "need a probe DSN"},
		{cmdSignoff, []string{"--before-probe-dsn", "postgres://p@h/d"}, "--before-target and --after-target"},
		{cmdSignoff, []string{"--mode", "maybe"}, "--mode"},
	} {
		args := append([]string{"--out", filepath.Join(dir, "out")}, tc.args...)
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := tc.cmd(context.Background(), testCLI(), args)
			if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want a usage error with %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused command left its --out behind")
			}
		})
	}
}

// TestRunBaseline: run --baseline judges a run against a stored one in
// regression mode; a baseline of another scenario is refused before any
// load (exit 2), unless --force.
func TestRunBaseline(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	ctx := context.Background()
	// An open model (a fixed arrival rate), so that the two runs' request
	// rates are the schedule's, not the loaded machine's: with closed-loop
	// users the rate follows latency, and two runs on a busy CI machine
	// differed by ×0.77 — a "regression" of the machine, not the service.
	scen := writeRateScenario(t, dir, "s", 20)
	base := filepath.Join(dir, "base")
	if err := cmdRun(ctx, isolatedCLI(), []string{"--target", target, "--scenario", scen, "--out", base}); err != nil {
		t.Fatalf("baseline run: %v", err)
	}
	out := filepath.Join(dir, "again")
	if err := cmdRun(ctx, isolatedCLI(), []string{"--target", target, "--scenario", scen, "--out", out, "--baseline", base}); err != nil {
		t.Fatalf("the same service against its own baseline: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "baseline", "report.md")); err != nil {
		t.Errorf("no baseline report: %v", err)
	}
	other := writeRateScenario(t, dir, "s", 30)
	refused := filepath.Join(dir, "refused")
	err := cmdRun(ctx, isolatedCLI(), []string{"--target", target, "--scenario", other, "--out", refused, "--baseline", base})
	if !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), "users differ") {
		t.Fatalf("a baseline of another scenario: %v, want a usage error naming the users", err)
	}
	if _, err := os.Stat(refused); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run wrote %s", refused)
	}
	if err := cmdRun(ctx, isolatedCLI(), []string{"--target", target, "--scenario", other, "--out", refused, "--baseline", base, "--force"}); errors.Is(err, cliflag.ErrUsage) {
		t.Errorf("--force: %v", err)
	}
}

// TestSignoffTwoTargets: signoff --before-target --after-target --mode
// regression on two healthy builds (load only) passes and writes both
// runs and the comparison.
func TestSignoffTwoTargets(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	before := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	after := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	scen := writeRateScenario(t, dir, "s", 20) // an open model: the verdict compares the rates
	out := filepath.Join(dir, "signoff")
	err := cmdSignoff(context.Background(), isolatedCLI(), []string{"--before-target", before, "--after-target", after, "--mode", "regression",
		"--after-name", "pr", "--scenario", scen, "--out", out})
	if err != nil {
		t.Fatalf("signoff: %v", err)
	}
	for _, f := range []string{"before/summary.json", "after/summary.json", "report.md", "compare.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// writeRateScenario writes a load-only scenario of 40 iterations a
// second for 3 s, with up to vus users to play them. 3 s: a p99 of 240
// requests, where one stall of a loaded machine is not the p99 (over 1 s
// it was: p99 17 → 304 ms read as a latency regression of the service).
//
// vus users are allocated for 40 arrivals a second: 20 keep the rate up
// to half a second of latency per arrival. With 2, a run beside other
// packages' tests lagged (60 ms per request), dropped arrivals and read
// as a regression of the request rate (×0.75).
func writeRateScenario(t *testing.T, dir, name string, vus int) string {
	t.Helper()
	p := filepath.Join(dir, name+"-rate"+itoa(vus)+".yaml")
	body := "scenarios:\n  " + name + ": {executor: constant-arrival-rate, rate: 40, timeUnit: 1s, duration: 3s, preAllocatedVUs: " + itoa(vus) + ", flow: [ping, {tools/call: {name: echo, arguments: {text: x}}}]}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeScenario writes a load-only scenario of vus users for d.
func writeScenario(t *testing.T, dir, name string, vus int, d string) string {
	t.Helper()
	p := filepath.Join(dir, name+strings.Repeat("x", vus)+".yaml")
	body := "scenarios:\n  " + name + ": {executor: constant-vus, vus: " + itoa(vus) + ", duration: " + d + ", flow: [ping, {tools/call: {name: echo, arguments: {text: x}}}, think: 20ms]}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var runnerTargetNone = runner.TargetOptions{}

func itoa(n int) string { return strconv.Itoa(n) }

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// shortProfileYAML is the CI profile cut down for a test: the whole loop,
// both runs, in about half a minute.
const shortProfileYAML = `
stack:
  idle_in_transaction_session_timeout: 3s
  users: 30
  pgbouncer_pool_size: 40
  gateway_pool_size: 40
probe:
  interval: 100ms
  stuck_after: 2s
  drain: 5s
timeout: 5s
scenarios:
  agents:
    executor: constant-vus
    vus: 20
    duration: 6s
    gracefulStop: 2s
    flow:
      - think: { uniform: [100ms, 300ms] }
      - choose:
          - weight: 3
            steps: [{ tools/call: { name: get_team_tools } }]
          - weight: 1
            steps: [{ tools/call: { name: generate_report, arguments: { seconds: 2 }, abortAfter: 900ms } }]
`

func shortProfile(t *testing.T) profiles.Profile {
	t.Helper()
	p, err := profiles.Parse([]byte(shortProfileYAML), "short.yaml")
	if err != nil {
		t.Fatalf("parse short profile: %v", err)
	}
	return p
}

// TestSignoffWholeLoop runs the walking skeleton end to end on a real local
// stack: the leaky gateway must show stuck sessions killed by the timeout,
// with the token-scoping SELECT as culprit; the fixed one none.
func TestSignoffWholeLoop(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: two local stacks under load")
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := shortProfile(t)
	p.Stack.TokenSeed = 1 // known tokens (else random), which assertNoSecrets looks for
	addr := freeAddr(t)
	scraped := scrapeWhileRunning(ctx, "http://"+addr+"/metrics", `leakbench_mcp_reqs_total{method="tools/call",name="get_team_tools",scenario="agents"}`)
	cmp, err := Signoff(ctx, SignoffOptions{Profile: p, Out: out, Version: "test", MetricsAddr: addr})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("signoff: %v", err)
	}
	if n := scraped(); n == 0 {
		t.Errorf("the engine's /metrics at %s never served the load's counters during the runs", addr)
	}
	for _, ch := range cmp.Checks {
		if !ch.Pass {
			t.Errorf("check failed: %s — %s", ch.Name, ch.Detail)
		}
	}
	b := cmp.Before.Probe
	if b.TimeoutTerminated == 0 {
		t.Errorf("before: no session was killed by idle_in_transaction_session_timeout")
	}
	if len(b.Culprits) == 0 || !strings.Contains(b.Culprits[0].Fingerprint, "email_team_members") {
		t.Errorf("before: top culprit is not the token-scoping SELECT: %+v", b.Culprits)
	}
	if b.LongestHoldSeconds < 2.5 || b.LongestHoldSeconds > 4 {
		t.Errorf("before: longest hold %.2fs, want ≈ the 3 s timeout", b.LongestHoldSeconds)
	}
	if cmp.Before.Load.Requests == 0 || cmp.After.Load.Requests == 0 {
		t.Errorf("no load was played: before %d, after %d requests", cmp.Before.Load.Requests, cmp.After.Load.Requests)
	}
	for _, f := range []string{"before/summary.json", "before/samples.jsonl", "before/episodes.jsonl", "before/report.md",
		"after/summary.json", "after/samples.jsonl", "report.md", "compare.json"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	// Re-reading what was written gives the same verdict.
	before, err := reports.ReadRun(filepath.Join(out, "before"))
	if err != nil {
		t.Fatalf("read before: %v", err)
	}
	if before.Probe.StuckEpisodes != b.StuckEpisodes {
		t.Errorf("summary.json round trip changed stuck episodes: %d vs %d", before.Probe.StuckEpisodes, b.StuckEpisodes)
	}
	assertNoSecrets(t, out, 30)
}

// assertNoSecrets fails if any seeded bearer token of a stack started with
// TokenSeed 1 appears in any file under dir.
func assertNoSecrets(t *testing.T, dir string, users int) {
	t.Helper()
	var secrets []string
	for i := 0; i < users; i++ {
		secrets = append(secrets, fixtures.SeedToken(1, i))
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s contains a bearer token", path)
				return nil
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseProfile(t *testing.T) {
	p, err := profiles.Lookup("ci")
	if err != nil {
		t.Fatalf("built-in ci profile: %v", err)
	}
	if p.Stack.IdleInTxTimeout != 5*time.Second || p.Probe.StuckAfter != 2*time.Second || p.VariantBefore != "commit-in-finally" {
		t.Errorf("ci profile read wrong: stack %+v probe %+v before %q", p.Stack, p.Probe, p.VariantBefore)
	}
	if len(p.Plan.Scenarios) == 0 {
		t.Fatalf("ci profile has no scenario")
	}
	for _, name := range profiles.Names() {
		p, err := profiles.Lookup(name)
		if err != nil {
			t.Errorf("built-in profile %s: %v", name, err)
			continue
		}
		if p.Stack.IdleInTxTimeout <= 0 || p.Plan == nil || p.VariantBefore == p.VariantAfter {
			t.Errorf("built-in profile %s is incomplete: %+v", name, p)
		}
	}
	if inc, err := profiles.Lookup("incident"); err != nil || inc.Stack.IdleInTxTimeout != 120*time.Second || inc.Stack.Users < 3000 {
		t.Errorf("incident profile must keep the incident's 120 s timeout and 3,000 users: %+v, %v", inc.Stack, err)
	}
	bad := []struct{ name, yaml, want string }{
		{"unknown stack key", "stack:\n  max_conns: 5\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n", `short.yaml:2: stack: unknown option "max_conns"`},
		{"bad stack value", "stack:\n  users: many\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n", "short.yaml:2: stack.users: want a whole number"},
		{"every problem at once", "signoff:\n  variant_befor: x\nscenarios:\n  a: {executor: constant-vus, vus: 0, duration: 1s, flow: [ping]}\n",
			"short.yaml:2: signoff: unknown option \"variant_befor\"; want one of variant_before, variant_after\nshort.yaml:4: scenarios.a.vus"},
		{"bad probe duration", "probe:\n  interval: soon\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n", "probe"},
		{"scenario error keeps its line", "stack:\n  users: 5\nprobe:\n  drain: 1s\nscenarios:\n  a: {executor: sometimes, vus: 1, duration: 1s, flow: [ping]}\n", "short.yaml:6"},
		{"tiny interval", "probe:\n  interval: 1ms\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n", "interval"},
	}
	// One set of rules for the whole file: any key spelling, in the
	// profile's sections too.
	spelled, err := profiles.Parse([]byte("probe:\n  stuckAfter: 3s\nstack:\n  idle-in-transaction-session-timeout: 4s\n"+
		"scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n"), "short.yaml")
	if err != nil || spelled.Probe.StuckAfter != 3*time.Second || spelled.Stack.IdleInTxTimeout != 4*time.Second {
		t.Errorf("sections in other spellings: %+v %+v, %v", spelled.Probe, spelled.Stack, err)
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := profiles.Parse([]byte(tt.yaml), "short.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// freeAddr returns a loopback address no one listens on, for a listener
// the run under test opens seconds later. Its port is below the kernel's
// ephemeral range (ip_local_port_range, 32768–60999 by default): a port
// from :0 is one the stacks this run starts first, and the tests beside
// it, may be given meanwhile for their own listeners and connections —
// CI's race step once saw the sign-off's metrics address taken so.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use: another
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatal("no free loopback port in 20000–31999 after 100 tries")
	return ""
}

// scrapeWhileRunning scrapes url every 250 ms until ctx ends; the function
// it returns stops it and says how many scrapes held want.
func scrapeWhileRunning(ctx context.Context, url, want string) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var hits atomic.Int64
	done := make(chan struct{})
	c := &http.Client{Timeout: time.Second}
	go func() {
		defer close(done)
		defer c.CloseIdleConnections()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			resp, err := c.Get(url)
			if err != nil {
				continue // not serving between the runs
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if strings.Contains(string(b), want) {
				hits.Add(1)
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		return int(hits.Load())
	}
}

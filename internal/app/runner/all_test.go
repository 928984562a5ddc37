package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestSignoffAllGoesOnAfterAFailure: a pattern whose sign-off cannot be
// done is recorded with its error, the next pattern still runs, and the
// combined verdict fails naming it. The stacks are refused before anything
// starts (a PgBouncer pool larger than max_connections), so no load runs.
func TestSignoffAllGoesOnAfterAFailure(t *testing.T) {
	bad := shortProfile(t)
	bad.Name, bad.Stack.PgBouncerPoolSize, bad.Stack.MaxConnections = "first", 50, 20
	second := bad
	second.Name = "second"
	out := t.TempDir()
	m, err := SignoffAll(context.Background(), SignoffAllOptions{SignoffOptions: SignoffOptions{Out: out, Env: "local"}, Profiles: []profiles.Profile{bad, second}})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if m.Pass || strings.Join(m.Failed, ",") != "first,second" || !strings.Contains(m.Patterns[0].Error, "max_connections") || m.Patterns[1].Error == "" {
		t.Errorf("want both patterns failed with the stack's error, got pass %v failed %v: %+v", m.Pass, m.Failed, m.Patterns)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no combined report after failures: %v", err)
	}

	dup := bad
	dup.Name = "first"
	if _, err := SignoffAll(context.Background(), SignoffAllOptions{SignoffOptions: SignoffOptions{Out: t.TempDir()}, Profiles: []profiles.Profile{bad, dup}}); err == nil {
		t.Errorf("two patterns named first: want an error, each names its directory")
	}
}

// TestPatternProfiles: the built-in profiles of --profile all each compare
// their own pattern with fixed, and the stack knobs they rely on are read.
func TestPatternProfiles(t *testing.T) {
	want := map[string]string{"ci": "commit-in-finally", "waiting": "held-while-waiting", "polling": "held-while-polling", "upstream": "held-across-upstream", "outside": "session-outside-request"}
	all, err := AllProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.VariantBefore != want[p.Name] || p.VariantAfter != "fixed" {
			t.Errorf("profile %s compares %s with %s, want %s with fixed", p.Name, p.VariantBefore, p.VariantAfter, want[p.Name])
		}
	}
	if slices.Contains(AllPatterns, "incident") || slices.Contains(profiles.Names(), AllProfile) {
		t.Errorf("--profile all is the patterns but incident, and no file may be called all.yaml: %v, %v", AllPatterns, profiles.Names())
	}
	out, err := profiles.Lookup("outside")
	if err != nil || !out.Stack.GatewayTokenUsage {
		t.Errorf("outside: the fixed run must record token usage too (stack.gateway_token_usage): %+v, %v", out.Stack, err)
	}
	w, err := profiles.Lookup("waiting")
	if err != nil || w.Stack.GatewayPoolSize != 20 || w.Stack.RunDelay != 5*time.Second || w.Stack.GatewayPoolTimeout != 5*time.Second {
		t.Errorf("waiting: stack knobs not read: %+v, %v", w.Stack, err)
	}
	p, err := profiles.Parse([]byte("stack:\n  upstream_latency: 3s\n  gateway-token-usage: true\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n"), "knobs.yaml")
	if err != nil || p.Stack.UpstreamLatency != 3*time.Second || !p.Stack.GatewayTokenUsage {
		t.Errorf("stack.upstream_latency / gateway_token_usage not read: %+v, %v", p.Stack, err)
	}
}

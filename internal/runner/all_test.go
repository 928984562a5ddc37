package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/internal/testenv"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports"
)

// patternSignatures say, per built-in profile, what its before run must
// show beyond the verdict: that pattern's own signature, not just any leak.
var patternSignatures = map[string]func(t *testing.T, c *reports.Comparison, dir string){
	// commit-in-finally: sessions idle in transaction on the token-scoping
	// SELECT until the timeout kills them.
	"ci": func(t *testing.T, c *reports.Comparison, dir string) {
		b := c.Before.Probe
		if b.TimeoutTerminated == 0 || b.MaxStuckIdleInTx == 0 || !topCulprit(b, "email_team_members") {
			t.Errorf("before: want sessions stuck on the token-scoping SELECT and killed by the timeout; got %d stuck at once, %d killed, culprits %v",
				b.MaxStuckIdleInTx, b.TimeoutTerminated, culpritNames(b))
		}
		// The leaked scoping sessions hold their callers' rows: the callers'
		// next requests wait on them (the lock cascade); after, none do.
		if f, af := c.Before.Forensics, c.After.Forensics; f == nil || f.BlockedBackends == 0 || f.EpisodesBlocking == 0 ||
			(af != nil && af.BlockedBackends != 0) {
			t.Errorf("lock cascade: before %+v, after %+v; want backends blocked by before's stuck sessions and none after", f, af)
		}
		// At least 99% of the stuck episodes name, in episodes.jsonl, the
		// request that left them.
		stuck, joined := 0, 0
		for _, e := range readJSONLines[rundir.Episode](t, filepath.Join(dir, "before", rundir.EpisodesFile)) {
			if e.EndReason != rundir.EndReleased {
				stuck++
				if e.Request != nil && e.Request.Method != "" {
					joined++
				}
			}
		}
		if stuck == 0 || float64(joined) < 0.99*float64(stuck) {
			t.Errorf("before: %d of %d stuck episodes in episodes.jsonl name their request; want at least 99%%", joined, stuck)
		}
	},
	// held-while-waiting: the service pool pinned at its max with acquires
	// waiting, while nothing is idle in a transaction; the fix frees it.
	"waiting": poolPinned,
	// held-while-polling (held-while-waiting's Tasks-era twin): the same
	// pool signature, and the tasks: created before but never completed
	// (their polls starve), all completed after.
	"polling": func(t *testing.T, c *reports.Comparison, dir string) {
		poolPinned(t, c, dir)
		bt, at := c.Before.Load.Features, c.After.Load.Features
		if bt == nil || bt.Tasks == nil || bt.Tasks.Created == 0 || bt.Tasks.Completed >= bt.Tasks.Created {
			t.Errorf("before: want tasks created and left uncompleted; got %+v", bt)
		}
		if at == nil || at.Tasks == nil || at.Tasks.Created == 0 || at.Tasks.Completed != at.Tasks.Created {
			t.Errorf("after: want every task completed; got %+v", at)
		}
		if c.After.Load.Latency["tasks/get"].Count == 0 {
			t.Error("after: no tasks/get polls measured")
		}
	},
	// held-across-upstream: sessions idle in transaction on the upstream
	// call's INSERT, killed by the timeout.
	"upstream": func(t *testing.T, c *reports.Comparison, _ string) {
		b := c.Before.Probe
		if b.TimeoutTerminated == 0 || !topCulprit(b, "insert into upstream_calls") {
			t.Errorf("before: want sessions killed by the timeout on the upstream_calls INSERT; got %d killed, culprits %v", b.TimeoutTerminated, culpritNames(b))
		}
	},
	// session-outside-request: sessions stuck on the token-usage UPDATE
	// until the timeout; both runs do the side job.
	"outside": func(t *testing.T, c *reports.Comparison, dir string) {
		b := c.Before.Probe
		if b.StuckEpisodes == 0 || b.TimeoutTerminated == 0 || !topCulprit(b, "update api_tokens") {
			t.Errorf("before: want sessions stuck on the api_tokens UPDATE and killed by the timeout; got %d stuck, %d killed, culprits %v",
				b.StuckEpisodes, b.TimeoutTerminated, culpritNames(b))
		}
		for _, run := range []string{"before", "after"} {
			raw, err := os.ReadFile(filepath.Join(dir, run, "config.json"))
			var cfg struct {
				Stack struct {
					TokenUsage bool `json:"gateway_token_usage"`
				} `json:"stack"`
			}
			if err != nil || json.Unmarshal(raw, &cfg) != nil || !cfg.Stack.TokenUsage {
				t.Errorf("%s: the gateway ran without token-usage tracking (config.json: %v)", run, err)
			}
		}
	},
}

// poolPinned is held-while-waiting's signature: the service pool pinned
// at its max with acquires waiting, while nothing is idle in a
// transaction; the fix frees it.
func poolPinned(t *testing.T, c *reports.Comparison, _ string) {
	b, a := c.Before.Probe, c.After.Probe
	if !b.AppPoolSampled || b.AppPoolMax == 0 || b.AppPoolMaxAcquired < b.AppPoolMax || b.AppPoolSaturatedSeconds < 2 || b.AppPoolAcquireWaits == 0 {
		t.Errorf("before: want the service pool pinned at its max for seconds with acquires waiting; got %.0f/%.0f acquired, at max %.1fs, %.0f waits",
			b.AppPoolMaxAcquired, b.AppPoolMax, b.AppPoolSaturatedSeconds, b.AppPoolAcquireWaits)
	}
	if b.StuckEpisodes != 0 || b.MaxStuckIdleInTx != 0 || b.TimeoutTerminated != 0 {
		t.Errorf("before: held-while-waiting holds idle connections, not transactions; saw %d stuck episodes, %d killed", b.StuckEpisodes, b.TimeoutTerminated)
	}
	if a.AppPoolSaturatedSeconds >= b.AppPoolSaturatedSeconds/2 {
		t.Errorf("after: pool at its max %.1fs, want far less than before's %.1fs", a.AppPoolSaturatedSeconds, b.AppPoolSaturatedSeconds)
	}
	if !slices.ContainsFunc(c.Checks, func(ch reports.Check) bool { return ch.Name == "after does not pin the service pool" }) {
		t.Errorf("the verdict has no pool check for a leak without transactions: %+v", c.Checks)
	}
}

func topCulprit(p *probes.Summary, want string) bool {
	return len(p.Culprits) > 0 && strings.Contains(strings.ToLower(p.Culprits[0].Fingerprint), want)
}

func culpritNames(p *probes.Summary) []string {
	var names []string
	for _, c := range p.Culprits {
		names = append(names, c.Fingerprint)
	}
	return names
}

// TestBuiltinProfileSignoffs signs off every pattern with its real
// built-in profile on local stacks, the way `leakbench signoff --profile
// all --env local` does (SignoffAll): one subtest per profile asserts its
// verdict passed and its before run showed that pattern's signature, then
// the combined report is checked. About 4–5 minutes on a 2-core machine;
// LEAKBENCH_TEST_PATTERNS=waiting,outside signs off only those.
func TestBuiltinProfileSignoffs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: two local stacks under load per pattern")
	}
	profiles, err := AllProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range AllPatterns {
		if patternSignatures[name] == nil {
			t.Errorf("built-in pattern %s has no signature test", name)
		}
	}
	if only := os.Getenv("LEAKBENCH_TEST_PATTERNS"); only != "" {
		keep := strings.Split(only, ",")
		profiles = slices.DeleteFunc(profiles, func(p Profile) bool { return !slices.Contains(keep, p.Name) })
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(profiles))*3*time.Minute)
	defer cancel()
	start := time.Now()
	m, err := SignoffAll(ctx, SignoffAllOptions{SignoffOptions: SignoffOptions{Out: out, Version: "test", Env: "local"}, Profiles: profiles})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("sign-off of every pattern: %v", err)
	}
	t.Logf("all %d patterns took %s", len(profiles), time.Since(start).Round(time.Second))
	if len(m.Patterns) != len(profiles) {
		t.Fatalf("%d patterns signed off, want %d", len(m.Patterns), len(profiles))
	}
	for _, p := range m.Patterns {
		t.Run(p.Name, func(t *testing.T) {
			c := p.Comparison
			if p.Error != "" || c == nil {
				t.Fatalf("could not be done: %s", p.Error)
			}
			b, a := c.Before.Probe, c.After.Probe
			t.Logf("%s in %.0fs — before (%s): %d stuck episodes (max %d at once), %d killed, release p99 %.2fs, pool %.0f/%.0f at max %.1fs, %.0f waits; after (%s): %d stuck, %d killed, release p99 %.2fs, pool at max %.1fs",
				p.Name, p.DurationSeconds, p.VariantBefore, b.StuckEpisodes, b.MaxStuckIdleInTx, b.TimeoutTerminated, b.ReleaseP99Seconds,
				b.AppPoolMaxAcquired, b.AppPoolMax, b.AppPoolSaturatedSeconds, b.AppPoolAcquireWaits,
				p.VariantAfter, a.StuckEpisodes, a.TimeoutTerminated, a.ReleaseP99Seconds, a.AppPoolSaturatedSeconds)
			for _, ch := range c.Checks {
				if !ch.Pass {
					t.Errorf("check failed: %s — %s", ch.Name, ch.Detail)
				}
			}
			if !p.Pass || a.StuckEpisodes != 0 || a.MaxStuckIdleInTx != 0 {
				t.Errorf("sign-off did not pass (after: %d stuck episodes)", a.StuckEpisodes)
			}
			patternSignatures[p.Name](t, c, filepath.Join(out, p.Dir))
			for _, f := range []string{"compare.json", "report.md", "report.html", "before/summary.json", "after/summary.json"} {
				if st, err := os.Stat(filepath.Join(out, p.Dir, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s/%s missing or empty: %v", p.Dir, f, err)
				}
			}
		})
	}
	if !m.Pass || len(m.Failed) != 0 {
		t.Errorf("combined verdict: pass %v, failed %v", m.Pass, m.Failed)
	}
	var back reports.MultiSignoff
	raw, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil || json.Unmarshal(raw, &back) != nil || back.Kind != reports.MultiKind || len(back.Patterns) != len(profiles) || !back.Pass {
		t.Errorf("combined compare.json: %v, %+v", err, back)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, p := range profiles {
		if !strings.Contains(string(md), "\n## "+p.Name+"\n") {
			t.Errorf("combined report.md has no section for %s", p.Name)
		}
	}
	for _, f := range []string{"report.html", "junit.xml"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("combined %s missing or empty: %v", f, err)
		}
	}
}

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
	m, err := SignoffAll(context.Background(), SignoffAllOptions{SignoffOptions: SignoffOptions{Out: out, Env: "local"}, Profiles: []Profile{bad, second}})
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
	if _, err := SignoffAll(context.Background(), SignoffAllOptions{SignoffOptions: SignoffOptions{Out: t.TempDir()}, Profiles: []Profile{bad, dup}}); err == nil {
		t.Errorf("two patterns named first: want an error, each names its directory")
	}
}

// TestPatternProfiles: the built-in profiles of --profile all each compare
// their own pattern with fixed, and the stack knobs they rely on are read.
func TestPatternProfiles(t *testing.T) {
	want := map[string]string{"ci": "commit-in-finally", "waiting": "held-while-waiting", "polling": "held-while-polling", "upstream": "held-across-upstream", "outside": "session-outside-request"}
	profiles, err := AllProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range profiles {
		if p.VariantBefore != want[p.Name] || p.VariantAfter != "fixed" {
			t.Errorf("profile %s compares %s with %s, want %s with fixed", p.Name, p.VariantBefore, p.VariantAfter, want[p.Name])
		}
	}
	if slices.Contains(AllPatterns, "incident") || slices.Contains(ProfileNames(), AllProfile) {
		t.Errorf("--profile all is the patterns but incident, and no file may be called all.yaml: %v, %v", AllPatterns, ProfileNames())
	}
	out, err := LookupProfile("outside")
	if err != nil || !out.Stack.GatewayTokenUsage {
		t.Errorf("outside: the fixed run must record token usage too (stack.gateway_token_usage): %+v, %v", out.Stack, err)
	}
	w, err := LookupProfile("waiting")
	if err != nil || w.Stack.GatewayPoolSize != 20 || w.Stack.RunDelay != 5*time.Second || w.Stack.GatewayPoolTimeout != 5*time.Second {
		t.Errorf("waiting: stack knobs not read: %+v, %v", w.Stack, err)
	}
	p, err := ParseProfile([]byte("stack:\n  upstream_latency: 3s\n  gateway-token-usage: true\nscenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n"), "knobs.yaml")
	if err != nil || p.Stack.UpstreamLatency != 3*time.Second || !p.Stack.GatewayTokenUsage {
		t.Errorf("stack.upstream_latency / gateway_token_usage not read: %+v, %v", p.Stack, err)
	}
}

//go:build e2e

package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
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
		// next requests wait on them (the lock cascade); after, none do. A
		// caller waits on its row only if it gets a connection to ask with:
		// when every connection of the pool was leaked at once (a slow,
		// loaded machine leaks them before any caller comes back), nobody
		// can, and only "none after" is asked.
		f, af := c.Before.Forensics, c.After.Forensics
		if af != nil && af.BlockedBackends != 0 {
			t.Errorf("lock cascade after the fix: %+v; want none", af)
		}
		if allLeaked := b.AppPoolMax > 0 && float64(b.MaxStuckIdleInTx) >= b.AppPoolMax; allLeaked {
			t.Logf("lock cascade not asked of before: all %d of the pool's connections were stuck at once, so no caller reached its locked row", b.MaxStuckIdleInTx)
		} else if f == nil || f.BlockedBackends == 0 || f.EpisodesBlocking == 0 {
			t.Errorf("lock cascade: before %+v (%d stuck at once, pool of %.0f); want backends blocked by before's stuck sessions", f, b.MaxStuckIdleInTx, b.AppPoolMax)
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
	if !slices.ContainsFunc(c.Checks, func(ch verdict.Check) bool { return ch.Name == "after does not pin the service pool" }) {
		t.Errorf("the verdict has no pool check for a leak without transactions: %+v", c.Checks)
	}
}

func topCulprit(p *rundir.ProbeSummary, want string) bool {
	return len(p.Culprits) > 0 && strings.Contains(strings.ToLower(p.Culprits[0].Fingerprint), want)
}

func culpritNames(p *rundir.ProbeSummary) []string {
	var names []string
	for _, c := range p.Culprits {
		names = append(names, c.Fingerprint)
	}
	return names
}

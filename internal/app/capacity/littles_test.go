//go:build e2e

package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// littleProfile is a capacity search on the reference gateway's fixed
// variant: a pool of P connections, each user thinking z on average
// (uniform over [z/2, 3z/2]) and then calling generate_report, which holds
// its database connection for h (a pg_sleep inside the session).
// PgBouncer's pool is larger than the gateway's, so the gateway's pool is
// the only limit. A stage breaks its limit when each user's request rate
// falls 10% below its rate with nothing queued — 1/(R+z) < 0.9/(h+z) —
// that is when the report's median latency R passes (h+z)/0.9 − z:
// requests queue for the pool. Past Little's ceiling R grows as N·h/P − z,
// so the limit trips within about 11% above it, and queueing near it
// (random think times) trips it a little earlier. (The median, not the
// mean: on a shared machine a burst of other work stretches a few
// requests, which moves a mean and not a median.)
func littleProfile(pool int, h, z time.Duration) string {
	return fmt.Sprintf(`
stack:
  idle_in_transaction_session_timeout: 5s
  max_connections: 100
  pool_mode: transaction
  pgbouncer_pool_size: 30
  gateway_pool_size: %d
  users: 100
probe: {interval: 100ms, stuck_after: 1s, drain: 1s}
capacity:
  load: users
  start: %d
  factor: 2
  stage: 5s
  resolution: 1
  max_stages: 8
  pool: off
  # The machine the tests run on is shared (see target_test.go).
  generator: off
  thresholds:
    mcp_req_duration{name:generate_report}: ["med<%d"]
timeout: 10s
seed: 1
scenarios:
  reports:
    executor: constant-vus
    vus: 1
    duration: 5s
    gracefulStop: 1s
    flow:
      - think: {uniform: [%dms, %dms]}
      - tools/call: {name: generate_report, arguments: {seconds: %g}}
`, pool, pool, (time.Duration(float64(h+z)/0.9) - z).Milliseconds(), (z / 2).Milliseconds(), (3 * z / 2).Milliseconds(), h.Seconds())
}

// TestE2ECapacityMatchesLittlesLaw: with a pool of P connections each
// request holds for h, and users thinking z between requests, the pool
// serves at most P/h requests a second: about P·(h+z)/h users. The
// capacity the search finds on the real stack (PostgreSQL, PgBouncer, the
// reference gateway) is within ±15% of that ceiling, in at most 8 stages,
// for three settings. About 2 minutes.
func TestE2ECapacityMatchesLittlesLaw(t *testing.T) {
	if testing.Short() {
		t.Skip("plays about 20 stages on the real stack (2 minutes); not in -short")
	}
	for _, tc := range []struct {
		pool int
		h, z time.Duration
	}{
		// Holds of 0.4 s and more: the gateway's own work per request
		// (token scoping, the commit: some 30 ms on a busy 2-core machine)
		// stays small beside h.
		{5, 400 * time.Millisecond, 400 * time.Millisecond},
		{8, 500 * time.Millisecond, 1500 * time.Millisecond},
		{4, 800 * time.Millisecond, 1200 * time.Millisecond},
	} {
		name := fmt.Sprintf("P=%d,h=%s,z=%s", tc.pool, tc.h, tc.z)
		t.Run(name, func(t *testing.T) {
			p, err := profiles.Parse([]byte(littleProfile(tc.pool, tc.h, tc.z)), "little.yaml")
			if err != nil {
				t.Fatal(err)
			}
			sp, err := Resolve(p.Capacity, p.Plan)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			out := t.TempDir()
			sum, err := Run(ctx, Options{Profile: p, Spec: sp, Variants: []string{"fixed"}, Env: fixtures.ProviderLocal, Out: out, Log: testLog{t}, Version: "test"})
			if errors.Is(err, fixtures.ErrMissingBinary) {
				testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
			}
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			s := sum.Capacity.Searches[0]
			// Little's law takes the hold the requests really had: h and
			// the gateway's own work around it (token scoping, the
			// commit), read as the median generate_report latency of the
			// first stage — P users thinking z, a pool a third used or
			// less, where nothing queues.
			hold := tc.h
			if len(s.Stages) > 0 {
				first, err := reports.LoadRun(filepath.Join(out, s.Stages[0].Dir))
				if err != nil {
					t.Fatalf("the first stage's run: %v", err)
				}
				if l, ok := first.Summary.Load.Latency[plan.OpCallTool]; ok && l.P50Ms > 0 {
					hold = time.Duration(l.P50Ms * float64(time.Millisecond))
				}
			}
			ceilingRate := float64(tc.pool) / hold.Seconds()
			ceiling := float64(tc.pool) * (hold + tc.z).Seconds() / hold.Seconds()
			nominal := float64(tc.pool) * (tc.h + tc.z).Seconds() / tc.h.Seconds()
			off := (float64(s.Capacity) - ceiling) / ceiling
			t.Logf("%s: hold %s (h %s); ceiling %.1f req/s, %.1f users (%.1f with h alone); found %d users (%+.1f%%) in %d stages, %s",
				name, hold.Round(time.Millisecond), tc.h, ceilingRate, ceiling, nominal, s.Capacity, 100*off, len(s.Stages), time.Since(start).Round(time.Second))
			if hold < tc.h || hold > tc.h*13/10 {
				t.Errorf("the first stage's hold %s is not h (%s) and a little: the stage queued or the tool did not hold", hold, tc.h)
			}
			if s.Outcome != capreport.Found || math.Abs(off) > 0.15 || len(s.Stages) > 8 {
				t.Errorf("%s; want a capacity within ±15%% of %.1f users in at most 8 stages", s.Headline(), ceiling)
			}
			// The sizing's hold, measured from the database (Little's law),
			// is h and the gateway's work around it; its ceiling P/h is the
			// throughput the stages could not pass (#42).
			sz := s.Sizing
			if sz == nil || sz.HoldSeconds == 0 || sz.CeilingReqPerS == 0 {
				t.Fatalf("search sizing %+v: want a measured hold and ceiling", sz)
			}
			peak := 0.0
			for _, st := range s.Stages {
				peak = max(peak, st.ReqPerSecond)
			}
			// The sizing's hold is per request, every MCP request counted
			// (initialize and the rest hold nothing); per tool call it is
			// the requests' share of the stage's tool calls.
			perCall := 0.0
			for _, st := range s.Stages {
				if st.Index != s.SizingStage {
					continue
				}
				r, err := reports.LoadRun(filepath.Join(out, st.Dir))
				if err != nil {
					t.Fatalf("the sized stage's run: %v", err)
				}
				if l, ok := r.Summary.Load.Latency[plan.OpCallTool]; ok && l.Count > 0 {
					perCall = sz.HoldSeconds * float64(r.Summary.Load.Requests) / float64(l.Count)
				}
			}
			// The knee in users that hold predicts: P/h calls a second, each
			// user making one per h + z.
			predicted := float64(tc.pool) * (perCall + tc.z.Seconds()) / perCall
			t.Logf("%s: sizing (stage %d): hold %.3f s per request, %.3f s per tool call (latency says %.3f s, h %.3f s); ceiling P/h %.2f req/s (the stages' peak %.2f req/s, every request counted); knee predicted from the measured hold %.1f users, found %d (%+.1f%%); pool needed at %.1f req/s: %d",
				name, s.SizingStage, sz.HoldSeconds, perCall, hold.Seconds(), tc.h.Seconds(), sz.CeilingReqPerS, peak, predicted, s.Capacity, 100*(float64(s.Capacity)-predicted)/predicted, sz.TargetReqPerS, sz.PoolNeeded)
			if math.Abs(perCall-hold.Seconds()) > 0.1*hold.Seconds() {
				t.Errorf("measured hold %.3f s per tool call, want the requests' %.3f s ± 10%%", perCall, hold.Seconds())
			}
			if math.Abs(float64(s.Capacity)-predicted) > 0.1*predicted {
				t.Errorf("knee %d users, want the measured hold's prediction %.1f ± 10%%", s.Capacity, predicted)
			}
		})
	}
}

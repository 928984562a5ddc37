//go:build e2e

package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
)

// littleProfile is a capacity search on the reference gateway's fixed
// variant: a pool of P connections, each user thinking z on average
// (uniform over [z/2, 3z/2]) and then calling generate_report, which holds
// its database connection for h (a pg_sleep inside the session).
// PgBouncer's pool is larger than the gateway's, so the gateway's pool is
// the only limit. A stage breaks its limit when the report's median
// latency passes 1.2 h: requests queue for the pool. (The median, not the
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
`, pool, pool, (12 * h / 10).Milliseconds(), (z / 2).Milliseconds(), (3 * z / 2).Milliseconds(), h.Seconds())
}

// TestCapacityMatchesLittlesLaw: with a pool of P connections each
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
			p, err := runner.ParseProfile([]byte(littleProfile(tc.pool, tc.h, tc.z)), "little.yaml")
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
			sum, err := Run(ctx, Options{Profile: p, Spec: sp, Variants: []string{"fixed"}, Env: fixtures.ProviderLocal, Out: t.TempDir(), Log: testLog{t}, Version: "test"})
			if errors.Is(err, fixtures.ErrMissingBinary) {
				testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
			}
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			s := sum.Capacity.Searches[0]
			ceilingRate := float64(tc.pool) / tc.h.Seconds()
			ceiling := float64(tc.pool) * (tc.h + tc.z).Seconds() / tc.h.Seconds()
			off := (float64(s.Capacity) - ceiling) / ceiling
			t.Logf("%s: ceiling %.1f req/s, %.1f users; found %d users (%+.1f%%) in %d stages, %s", name, ceilingRate, ceiling, s.Capacity, 100*off, len(s.Stages), time.Since(start).Round(time.Second))
			if s.Outcome != reports.CapacityFound || math.Abs(off) > 0.15 || len(s.Stages) > 8 {
				t.Errorf("%s; want a capacity within ±15%% of %.1f users in at most 8 stages", s.Headline(), ceiling)
			}
		})
	}
}

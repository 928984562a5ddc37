package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// backoffs returns, for users 0..n-1 of a plan seeded with seed, the
// waits before their retry after `fails` failed initializes in a row.
func backoffs(t *testing.T, seed int64, n, fails int) []time.Duration {
	t.Helper()
	p := mustParse(t, fmt.Sprintf("seed: %d\nscenarios:\n  s: {executor: constant-vus, vus: %d, duration: 1s, flow: [ping]}\n", seed, n))
	p.Target = "http://127.0.0.1:1/mcp" // nothing is sent
	cp, err := plan.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(cp, nil, RunOptions{})
	defer e.client.CloseIdleConnections()
	out := make([]time.Duration, n)
	for u := range n {
		v := newVU(e.runs[0], u, 0)
		v.initFails = fails
		out[u] = v.backoff()
	}
	return out
}

// TestInitBackoffFullJitter: users that failed to initialize together
// do not retry in lockstep (which would shape the recovery figures of a
// faults run): each waits a uniform time in [0, min(cap, base·2^(k-1)))
// after k failures in a row (AWS's "full jitter"), spread over that
// range, never past the cap, and the same under the same seed.
func TestInitBackoffFullJitter(t *testing.T) {
	const users = 200
	for fails := 1; fails <= 8; fails++ {
		ceiling := min(minInitBackoff<<(fails-1), maxInitBackoff)
		got := backoffs(t, 1, users, fails)
		lo, hi := slices.Min(got), slices.Max(got)
		if lo < 0 || hi >= ceiling {
			t.Errorf("after %d failures: waits in [%s, %s], want within [0, %s)", fails, lo, hi, ceiling)
		}
		distinct := len(slices.Compact(slices.Sorted(slices.Values(got))))
		// Uniform over the range: the users' waits cover most of it
		// (200 draws leave a gap over a tenth of it with odds below 1e-8).
		if distinct < users/2 || hi-lo < ceiling*8/10 {
			t.Errorf("after %d failures: %d distinct waits in [%s, %s] of %d users, want them spread over [0, %s)", fails, distinct, lo, hi, users, ceiling)
		}
		var sum time.Duration
		for _, d := range got {
			sum += d
		}
		if mean := sum / users; mean < ceiling*35/100 || mean > ceiling*65/100 {
			t.Errorf("after %d failures: mean wait %s, want about half of %s", fails, mean, ceiling)
		}
		if again := backoffs(t, 1, users, fails); !slices.Equal(got, again) {
			t.Errorf("after %d failures: the same seed gave other waits", fails)
		}
		if other := backoffs(t, 2, users, fails); slices.Equal(got, other) {
			t.Errorf("after %d failures: another seed gave the same waits", fails)
		}
	}
}

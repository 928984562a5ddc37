//go:build e2e

package capacity

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestE2ELongCapacityProfile plays the built-in capacity profile (make
// e2e-long, about 2 minutes):
// the leaky variant's capacity and the fixed one's, each on its own local
// stack; the fix must raise it.
func TestE2ELongCapacityProfile(t *testing.T) {
	p, err := profiles.Lookup("capacity")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Resolve(p.Capacity, p.Plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{Profile: p, Spec: sp, Variants: []string{p.VariantBefore, p.VariantAfter}, Env: fixtures.ProviderLocal,
		Out: t.TempDir(), Log: testLog{t}, Version: "test"})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	c := sum.Capacity.Change
	if c == nil || c.To <= c.From {
		t.Fatalf("the fix did not raise capacity: %+v", sum.Capacity)
	}
	t.Log(c.Line)
}

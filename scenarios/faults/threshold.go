package faults

import (
	"fmt"
	"math"
	"slices"

	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// RecoveryThreshold is a threshold on the faults' recovery times, in the
// scenario language's own expression syntax (threshold.ParseExpression):
// "max<10", "avg<=2.5", "p(90)<5" (seconds).
type RecoveryThreshold struct{ threshold.Expr }

// recoveryAggs are the aggregations that mean something over a list of
// recovery times.
var recoveryAggs = []string{"max", "min", "avg", "med", "p"}

// ParseRecoveryThreshold parses AGG OP SECONDS.
func ParseRecoveryThreshold(s string) (RecoveryThreshold, error) {
	x, err := threshold.ParseExpression(s)
	if err != nil {
		return RecoveryThreshold{}, err
	}
	if !slices.Contains(recoveryAggs, x.Agg) {
		return RecoveryThreshold{}, fmt.Errorf("%q: recovery times take max, min, avg, med or p(N), not %s", s, x.Agg)
	}
	return RecoveryThreshold{x}, nil
}

// Observe aggregates vals (not empty).
func (t RecoveryThreshold) Observe(vals []float64) float64 {
	sorted := slices.Sorted(slices.Values(vals))
	switch t.Agg {
	case "min":
		return sorted[0]
	case "avg":
		var sum float64
		for _, v := range sorted {
			sum += v
		}
		return sum / float64(len(sorted))
	case "med":
		return nearestRank(sorted, 50)
	case "p":
		return nearestRank(sorted, t.Pct)
	}
	return sorted[len(sorted)-1]
}

// nearestRank is the p-th percentile of sorted values, nearest rank.
func nearestRank(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

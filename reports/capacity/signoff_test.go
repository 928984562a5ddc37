package capacity_test

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
)

// TestSignoffCapacityNoChange: searches that measured no change say so,
// and compare.json has no change line.
func TestSignoffCapacityNoChange(t *testing.T) {
	c := synthetic.Capacity()
	c.Capacity.Change = nil
	c.Capacity.Searches[1].Outcome, c.Capacity.Searches[1].Reason = capacity.Inconclusive, "stage 2 (88 users): the load generator saturated"
	sc := capacity.NewSignoff(c, capacity.SignoffDir)
	var b strings.Builder
	sc.WriteMarkdown(&b)
	if sc.ChangeLine != "" || !sc.Variants[1].AtLeast || !strings.Contains(b.String(), "No change measured") ||
		!strings.Contains(b.String(), "fixed: inconclusive — stage 2 (88 users): the load generator saturated; held every limit up to 40 users (a lower bound, not the capacity)") {
		t.Errorf("%+v:\n%s", sc, b.String())
	}
}

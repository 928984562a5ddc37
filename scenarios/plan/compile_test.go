package plan

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// TestGeneratorLagThresholdParse: generator_lag is a trend in ms with no
// tags: p(N), max and the rest parse; a filter or a rate is refused.
func TestGeneratorLagThresholdParse(t *testing.T) {
	for _, tc := range []struct {
		metric, expr, err string
	}{
		{"generator_lag", "p(99)<50", ""},
		{" generator_lag ", "max<=200", ""},
		{"generator_lag", "med<5", ""},
		{"generator_lag{scenario:a}", "p(99)<50", "takes no tag filter"},
		{"generator_lag", "rate<0.1", "not an aggregation of this metric"},
		{"generator_lags", "p(99)<50", "unknown metric"},
	} {
		ct, err := compileThreshold(Threshold{Metric: tc.metric, Expression: tc.expr}, []string{"a"})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: %v, want error %q", tc.metric, tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || ct.Name != threshold.MetricGeneratorLag || len(ct.Filter) != 0 {
			t.Errorf("%s %s: %+v %v", tc.metric, tc.expr, ct, err)
		}
	}
}

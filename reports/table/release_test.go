package table

import (
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// TestReleaseRow: the release line shows the service pool's own view of
// how long checkouts held their connection beside the database's, only
// when the service exported a use time.
func TestReleaseRow(t *testing.T) {
	for _, c := range []struct {
		probe *rundir.ProbeSummary
		want  string
	}{
		{nil, "no episode seen"},
		{&rundir.ProbeSummary{}, "no episode seen"},
		{&rundir.ProbeSummary{Episodes: 3, ReleaseP50Seconds: 0.002, ReleaseP99Seconds: 0.01, ReleaseMaxSeconds: 0.02},
			format.Seconds(0.002) + " / " + format.Seconds(0.01) + " / " + format.Seconds(0.02)},
		{&rundir.ProbeSummary{Episodes: 3, ReleaseP50Seconds: 0.002, ReleaseP99Seconds: 0.01, ReleaseMaxSeconds: 0.02, AppPoolUses: 1200, AppPoolUseSeconds: 30, AppPoolUseMeanSeconds: 0.025},
			format.Seconds(0.002) + " / " + format.Seconds(0.01) + " / " + format.Seconds(0.02) + "; service pool's view: held " + format.Seconds(0.025) + " on average over 1200 checkouts, p95 not measured (its use time has no histogram buckets)"},
		{&rundir.ProbeSummary{AppPoolUses: 10, AppPoolUseSeconds: 5, AppPoolUseMeanSeconds: 0.5},
			"no episode seen; service pool's view: held " + format.Seconds(0.5) + " on average over 10 checkouts, p95 not measured (its use time has no histogram buckets)"},
		{&rundir.ProbeSummary{AppPoolUses: 10, AppPoolUseSeconds: 5, AppPoolUseMeanSeconds: 0.5, AppPoolUseQuantiles: &rundir.PoolTimeQuantiles{
			P95: rundir.PoolTimeQuantile{Seconds: 0.9, BucketLowSeconds: 0.5, BucketHighSeconds: 1}}},
			"no episode seen; service pool's view: held " + format.Seconds(0.5) + " on average over 10 checkouts, p95 ≈ " + format.Seconds(0.9) +
				" (estimated within its use_time histogram's bucket of " + format.Seconds(0.5) + " to " + format.Seconds(1) + ")"},
		{&rundir.ProbeSummary{AppPoolUses: 10, AppPoolUseSeconds: 50, AppPoolUseMeanSeconds: 5, AppPoolUseQuantiles: &rundir.PoolTimeQuantiles{
			P95: rundir.PoolTimeQuantile{Seconds: 2.5, BucketLowSeconds: 2.5, AtLeast: true}}},
			"no episode seen; service pool's view: held " + format.Seconds(5) + " on average over 10 checkouts, p95 at least " + format.Seconds(2.5) +
				" (beyond its use_time histogram's highest bucket)"},
	} {
		if got := releaseRow(&rundir.Summary{Probe: c.probe}); got != c.want {
			t.Errorf("releaseRow(%+v) = %q, want %q", c.probe, got, c.want)
		}
	}
}

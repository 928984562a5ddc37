package runner

import (
	"testing"

	"github.com/leakbench/leakbench/fixtures"
)

// TestScrapeTargetsOfYourService: the reference gateway's metrics are read
// by its own mapping; a service leakbench did not start by automatic
// detection, so that one exporting the OpenTelemetry pool conventions (or
// go_sql, HikariCP, SQLAlchemy) is read without a mapping given.
func TestScrapeTargetsOfYourService(t *testing.T) {
	if got := scrapeTargets(&fixtures.Env{}); got != nil {
		t.Errorf("no metrics URL: %+v, want none", got)
	}
	for _, tc := range []struct {
		provider, want string
	}{{fixtures.ProviderLocal, "gateway"}, {fixtures.ProviderDocker, "gateway"}, {fixtures.ProviderExternal, "auto"}} {
		got := scrapeTargets(&fixtures.Env{Provider: tc.provider, GatewayMetricsURL: "http://127.0.0.1:9/metrics"})
		if len(got) != 1 || got[0].Mapping != tc.want || got[0].URL != "http://127.0.0.1:9/metrics" {
			t.Errorf("%s: %+v, want one target mapped %q", tc.provider, got, tc.want)
		}
	}
}

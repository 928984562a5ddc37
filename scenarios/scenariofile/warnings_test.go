package scenariofile

import (
	"slices"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestPingWarning: a ping step under protocolVersion auto (the default)
// or 2026-07-28 is valid, but fails on every 2026-07-28 server (ping was
// removed there): the plan warns before any load, naming the file, the
// step's line and the two ways out. A 2025 pin (or negotiate) speaks a
// version that has ping: no warning.
func TestPingWarning(t *testing.T) {
	flow := "scenarios:\n" +
		"  s:\n" +
		"    executor: constant-vus\n" +
		"    duration: 1s\n" +
		"%s" +
		"    flow:\n" +
		"      - tools/list\n" +
		"      - ping\n" + // line 7, one more for each setting above it
		"      - choose:\n" +
		"          - weight: 1\n" +
		"            steps: [ping]\n" // line 10, likewise
	scen := func(planWide, scenario string) string {
		return planWide + strings.Replace(flow, "%s", scenario, 1)
	}
	const auto = "fails with a jsonrpc error on every server that offers 2026-07-28 (ping was removed there); pin a 2025 version (protocolVersion: 2025-06-18) or drop the step"
	const modern = "fails with a jsonrpc error on every server (ping was removed in 2026-07-28); pin a 2025 version (protocolVersion: 2025-06-18) or drop the step"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"auto by default", scen("", ""), []string{
			"w.yaml:7: scenarios.s.flow[1].ping: ping under protocolVersion auto " + auto,
			"w.yaml:10: scenarios.s.flow[2].choose[0].steps[0].ping: ping under protocolVersion auto " + auto,
		}},
		{"auto plan-wide", scen("protocolVersion: auto\n", ""), []string{
			"w.yaml:8: scenarios.s.flow[1].ping: ping under protocolVersion auto " + auto,
			"w.yaml:11: scenarios.s.flow[2].choose[0].steps[0].ping: ping under protocolVersion auto " + auto,
		}},
		{"auto in the scenario over a pin", scen("protocolVersion: 2025-06-18\n", "    protocolVersion: auto\n"), []string{
			"w.yaml:9: scenarios.s.flow[1].ping: ping under protocolVersion auto " + auto,
			"w.yaml:12: scenarios.s.flow[2].choose[0].steps[0].ping: ping under protocolVersion auto " + auto,
		}},
		{"2026-07-28", scen("protocolVersion: 2026-07-28\n", ""), []string{
			"w.yaml:8: scenarios.s.flow[1].ping: ping under protocolVersion 2026-07-28 " + modern,
			"w.yaml:11: scenarios.s.flow[2].choose[0].steps[0].ping: ping under protocolVersion 2026-07-28 " + modern,
		}},
		{"pinned to 2025-06-18", scen("protocolVersion: 2025-06-18\n", ""), nil},
		{"pinned in the scenario", scen("", "    protocolVersion: 2025-06-18\n"), nil},
		{"negotiate", scen("protocolVersion: negotiate\n", ""), nil},
		{"no ping", "scenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [tools/list]}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.yaml), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cp, err := plan.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := cp.Warnings(); !slices.Equal(got, tt.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if got := p.Warnings(); !slices.Equal(got, tt.want) {
				t.Errorf("Plan.Warnings %q, want Compiled.Warnings' %q", got, tt.want)
			}
		})
	}
}

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

// TestDeprecatedSpellings: every key has one spelling; the others are
// still read, each with a warning naming its line and the key to write.
// A profile's own sections are held to the spelling of their yaml tags.
func TestDeprecatedSpellings(t *testing.T) {
	type probe struct {
		StuckAfter string `yaml:"stuck_after"`
	}
	var pr probe
	p, err := Parse([]byte(`protocol_version: auto
connections: per-user
probe:
  stuckAfter: 2s
scenarios:
  s:
    executor: constant-vus
    duration: 1s
    graceful-stop: 1s
    flow:
      - tools/call: { name: echo, abort_after: 100ms }
      - end_session
      - callTool: echo
thresholds:
  mcp_req_failed: [{ threshold: "rate<0.1", abort-on-fail: true }]
`), "d.yaml", Section{Key: "probe", Into: &pr})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`d.yaml:1: protocolVersion: "protocol_version" is a deprecated spelling; write protocolVersion`,
		`d.yaml:2: connections: "per-user" is a deprecated spelling; write perUser`,
		`d.yaml:4: probe.stuck_after: "stuckAfter" is a deprecated spelling; write stuck_after`,
		`d.yaml:9: scenarios.s.gracefulStop: "graceful-stop" is a deprecated spelling; write gracefulStop`,
		`d.yaml:11: scenarios.s.flow[0].tools/call.abortAfter: "abort_after" is a deprecated spelling; write abortAfter`,
		`d.yaml:12: scenarios.s.flow[1].endSession: "end_session" is a deprecated spelling; write endSession`,
		`d.yaml:15: thresholds.mcp_req_failed.abortOnFail: "abort-on-fail" is a deprecated spelling; write abortOnFail`,
	}
	got := p.Warnings()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pr.StuckAfter != "2s" || p.Scenarios[0].GracefulStop.String() != "1s" || p.Scenarios[0].Flow[0].AbortAfter.String() != "100ms" {
		t.Errorf("the deprecated spellings were not read: probe %+v, scenario %+v", pr, p.Scenarios[0])
	}
	// The canonical spellings warn of nothing.
	p, err = Parse([]byte("protocolVersion: auto\nscenarios:\n  s: {executor: constant-vus, duration: 1s, gracefulStop: 1s, flow: [tools/list]}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Warnings(); len(w) != 0 {
		t.Errorf("canonical spellings warned: %q", w)
	}
}

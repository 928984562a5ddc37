package scenariofile

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestProtocolVersionSettings: protocolVersion, plan-wide and per
// scenario, takes auto (the default), negotiate, 2026-07-28 or a 2025
// revision; each scenario's users get the setting the mcp client takes.
func TestProtocolVersionSettings(t *testing.T) {
	const scen = "scenarios:\n  s:\n    executor: constant-vus\n    duration: 1s\n"
	tests := []struct {
		name, yaml string
		planWide   string // Plan.ProtocolVersion
		pin        string // CompiledScenario.Pin
	}{
		{"default", scen + "    flow: [tools/list]\n", plan.AutoVersion, mcp.VersionAuto},
		{"auto", "protocolVersion: auto\n" + scen + "    flow: [tools/list]\n", plan.AutoVersion, mcp.VersionAuto},
		{"negotiate", "protocolVersion: negotiate\n" + scen + "    flow: [ping]\n", plan.NegotiateVersion, ""},
		{"2026-07-28", "protocolVersion: 2026-07-28\n" + scen + "    flow: [server/discover]\n", mcp.Version20260728, mcp.Version20260728},
		{"a 2025 revision", "protocolVersion: 2025-11-25\n" + scen + "    flow: [ping]\n", "2025-11-25", "2025-11-25"},
		{"scenario pins over auto", scen + "    protocolVersion: negotiate\n    flow: [ping]\n", plan.AutoVersion, ""},
		{"scenario auto over a pin", "protocolVersion: 2025-03-26\n" + scen + "    protocolVersion: auto\n    flow: [ping]\n", "2025-03-26", mcp.VersionAuto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.yaml), "v.yaml")
			if err != nil {
				t.Fatal(err)
			}
			cp, err := plan.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			if p.ProtocolVersion != tt.planWide || cp.Scenarios[0].Pin != tt.pin {
				t.Errorf("plan's protocolVersion %q, scenario's pin %q; want %q, %q", p.ProtocolVersion, cp.Scenarios[0].Pin, tt.planWide, tt.pin)
			}
		})
	}
}

// TestProtocolVersionErrors: a bad setting names the file, the line and
// every accepted value.
func TestProtocolVersionErrors(t *testing.T) {
	const scen = "scenarios:\n  s:\n    executor: constant-vus\n    duration: 1s\n"
	accepted := `want auto (the default: the server's newest era), negotiate (the 2025 handshake, any 2025 version), 2026-07-28, or a 2025 revision pinned: ` +
		strings.Join(mcp.SupportedVersions, ", ")
	tests := []struct{ name, yaml, want string }{
		{"plan-wide", "seed: 1\nprotocolVersion: 2024-11-05\n" + scen + "    flow: [ping]\n",
			`v.yaml:2: protocolVersion: "2024-11-05" is not a version this client speaks; ` + accepted},
		{"per scenario", scen + "    protocolVersion: latest\n    flow: [ping]\n",
			`v.yaml:5: scenarios.s.protocolVersion: "latest" is not a version this client speaks; ` + accepted},
		{"the empty string", "protocolVersion: \"\"\n" + scen + "    flow: [ping]\n", "v.yaml:1: protocolVersion"},
		{"a future revision", scen + "    protocolVersion: 2027-01-01\n    flow: [ping]\n", `v.yaml:5: scenarios.s.protocolVersion: "2027-01-01" is not`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "v.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestDiscoverStep: server/discover (or discover) is a request step of
// its own, with a request's options, and a threshold's method tag.
func TestDiscoverStep(t *testing.T) {
	p, err := Parse([]byte(`scenarios:
  s:
    executor: constant-vus
    duration: 1s
    flow:
      - server/discover
      - discover: {timeout: 2s, check: ["supportedVersions != null"]}
thresholds:
  mcp_req_duration{method:server/discover}: ["p(95)<500"]
`), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := p.Scenarios[0].Flow
	if len(f) != 2 || f[0].Kind != plan.OpDiscover || f[1].Kind != plan.OpDiscover || f[1].Timeout.D().Seconds() != 2 || len(f[1].Checks) != 1 {
		t.Errorf("flow %+v", f)
	}
	_, err = Parse([]byte("scenarios:\n  s:\n    executor: constant-vus\n    duration: 1s\n    flow:\n      - server/discover: {name: x}\n"), "d.yaml")
	if err == nil || !strings.Contains(err.Error(), "d.yaml:6:") {
		t.Errorf("a name on server/discover: %v", err)
	}
}

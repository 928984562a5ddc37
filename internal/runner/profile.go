// Package runner plays one scenario against one stack with the probes beside
// it and records everything into a run directory; Signoff does it twice —
// leaky variant, then fixed — and compares.
package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// Profile is a complete, reproducible sign-off recipe: a scenario plus what
// to start, how to watch it and which variants to compare. It is recorded
// in every run's config.json, whose format package rundir owns.
type Profile = rundir.Profile

// ProbeSettings say how the probes watch a run (rundir.ProbeSettings).
type ProbeSettings = rundir.ProbeSettings

// stackSection mirrors fixtures.Config in the profile's YAML spelling.
type stackSection struct {
	IdleInTxTimeout   time.Duration `yaml:"idle_in_transaction_session_timeout"`
	MaxConnections    int           `yaml:"max_connections"`
	PoolMode          string        `yaml:"pool_mode"`
	PgBouncerPoolSize int           `yaml:"pgbouncer_pool_size"`
	MaxClientConn     int           `yaml:"max_client_conn"`
	GatewayPoolSize   int           `yaml:"gateway_pool_size"`
	Users             int           `yaml:"users"`
	Teams             int           `yaml:"teams"`
	Seed              int64         `yaml:"seed"`
	// The gateway's and its upstream's knobs.
	GatewayPoolTimeout time.Duration `yaml:"gateway_pool_timeout"`
	// The gateway's own request deadline (its timeout middleware); 0: none.
	GatewayRequestTimeout time.Duration `yaml:"gateway_request_timeout"`
	GatewayStateless      bool          `yaml:"gateway_stateless"`
	GatewayTokenUsage     bool          `yaml:"gateway_token_usage"` // token-usage tracking, where session-outside-request leaks
	RunDelay              time.Duration `yaml:"run_delay"`
	UpstreamLatency       time.Duration `yaml:"upstream_latency"`
	UpstreamFailureRate   float64       `yaml:"upstream_failure_rate"`
}

type signoffSection struct {
	VariantBefore string `yaml:"variant_before"`
	VariantAfter  string `yaml:"variant_after"`
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string { return profiles.Names() }

// LookupProfile loads a built-in profile by name.
func LookupProfile(name string) (Profile, error) {
	data, ok := profiles.Read(name)
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (built in: %s; or give a file with --scenario)", name, strings.Join(profiles.Names(), ", "))
	}
	p, err := ParseProfile(data, "profile "+name)
	if err != nil {
		return Profile{}, err
	}
	p.Name = name
	return p, nil
}

// LoadProfile reads a profile (or plain scenario) file.
func LoadProfile(path string) (Profile, error) {
	p, err := profileFrom(path, func(sections ...scenariofile.Section) (*plan.Plan, error) {
		return scenariofile.Load(path, sections...)
	})
	if err != nil {
		return Profile{}, err
	}
	p.Name = strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml")
	return p, nil
}

// ParseProfile parses a profile: a scenario file whose stack, probe and
// signoff sections are decoded by the scenario parser too, by the same
// rules (any key spelling, every error naming its line). A plain scenario
// file is a profile with defaults.
func ParseProfile(data []byte, filename string) (Profile, error) {
	return profileFrom(filename, func(sections ...scenariofile.Section) (*plan.Plan, error) {
		return scenariofile.Parse(data, filename, sections...)
	})
}

// profileFrom builds a profile from the plan that parse reads along with
// the profile's own sections.
func profileFrom(filename string, parse func(...scenariofile.Section) (*plan.Plan, error)) (Profile, error) {
	p := Profile{File: filename, VariantBefore: "commit-in-finally", VariantAfter: "fixed",
		Probe: ProbeSettings{Interval: 100 * time.Millisecond, StuckAfter: time.Second, Drain: 10 * time.Second}}
	var stack stackSection
	var signoff signoffSection
	var recovery recoverySection
	pl, err := parse(scenariofile.Section{Key: "stack", Into: &stack}, scenariofile.Section{Key: "probe", Into: &p.Probe},
		scenariofile.Section{Key: "signoff", Into: &signoff},
		scenariofile.Section{Key: "faults", Into: &p.Faults}, scenariofile.Section{Key: "recovery", Into: &recovery})
	if err != nil {
		return p, err
	}
	p.RecoverySeconds = recovery.RecoverySeconds
	if err := checkFaults(filename, pl, p); err != nil { // faults.go
		return p, err
	}
	p.Plan = pl
	p.Stack = fixtures.Config{IdleInTxTimeout: stack.IdleInTxTimeout, MaxConnections: stack.MaxConnections,
		PoolMode: stack.PoolMode, PgBouncerPoolSize: stack.PgBouncerPoolSize, MaxClientConn: stack.MaxClientConn,
		GatewayPoolSize: stack.GatewayPoolSize, Users: stack.Users, Teams: stack.Teams, Seed: stack.Seed,
		GatewayPoolTimeout: stack.GatewayPoolTimeout, GatewayRequestTimeout: stack.GatewayRequestTimeout, GatewayStateless: stack.GatewayStateless, GatewayTokenUsage: stack.GatewayTokenUsage, RunDelay: stack.RunDelay,
		UpstreamLatency: stack.UpstreamLatency, UpstreamFailureRate: stack.UpstreamFailureRate}
	if signoff.VariantBefore != "" {
		p.VariantBefore = signoff.VariantBefore
	}
	if signoff.VariantAfter != "" {
		p.VariantAfter = signoff.VariantAfter
	}
	if p.Probe.Interval < 10*time.Millisecond || p.Probe.StuckAfter <= 0 || p.Probe.Drain < 0 {
		return p, fmt.Errorf("%s: probe: want interval ≥ 10ms, stuck_after > 0 and drain ≥ 0, got %s, %s, %s",
			filename, p.Probe.Interval, p.Probe.StuckAfter, p.Probe.Drain)
	}
	return p, nil
}

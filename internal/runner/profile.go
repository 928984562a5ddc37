// Package runner plays one scenario against one stack with the probes beside
// it and records everything into a run directory; Signoff does it twice —
// leaky variant, then fixed — and compares.
package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"go.yaml.in/yaml/v3"
)

// Profile is a complete, reproducible sign-off recipe: a scenario plus what
// to start, how to watch it and which variants to compare.
type Profile struct {
	Name  string          `json:"name"`
	File  string          `json:"file"`
	Stack fixtures.Config `json:"stack"`
	Plan  *plan.Plan      `json:"plan"`
	Probe ProbeSettings   `json:"probe"`
	// VariantBefore and VariantAfter are the gateway variants compared.
	VariantBefore string `json:"variant_before"`
	VariantAfter  string `json:"variant_after"`
}

// ProbeSettings say how the probes watch a run.
type ProbeSettings struct {
	// Interval is the pg_stat_activity sampling interval.
	Interval time.Duration `json:"interval" yaml:"interval"`
	// StuckAfter is when an idle-in-transaction episode counts as stuck.
	StuckAfter time.Duration `json:"stuck_after" yaml:"stuck_after"`
	// Drain is the longest the probes keep watching after the load stops,
	// so that leaked sessions are seen to their end (the server's
	// timeout); it ends early once no session is idle in a transaction.
	Drain time.Duration `json:"drain" yaml:"drain"`
}

// profileSections are the top-level keys of a profile file that are
// leakbench's rather than the scenario's.
var profileSections = map[string]bool{"stack": true, "probe": true, "signoff": true}

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
	GatewayPoolTimeout  time.Duration `yaml:"gateway_pool_timeout"`
	GatewayStateless    bool          `yaml:"gateway_stateless"`
	RunDelay            time.Duration `yaml:"run_delay"`
	UpstreamLatency     time.Duration `yaml:"upstream_latency"`
	UpstreamFailureRate float64       `yaml:"upstream_failure_rate"`
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
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("read scenario file: %w", err)
	}
	p, err := ParseProfile(data, path)
	if err != nil {
		return Profile{}, err
	}
	p.Name = strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml")
	return p, nil
}

// ParseProfile parses a profile: the stack, probe and signoff sections here,
// the rest by plan.ParsePlan. The sections are blanked out line by
// line before the scenario parser sees the file, so its errors keep naming
// the right lines. A plain scenario file is a profile with defaults.
func ParseProfile(data []byte, filename string) (Profile, error) {
	p := Profile{File: filename, VariantBefore: "commit-in-finally", VariantAfter: "fixed",
		Probe: ProbeSettings{Interval: 100 * time.Millisecond, StuckAfter: time.Second, Drain: 10 * time.Second}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return p, fmt.Errorf("%s: not valid YAML: %w", filename, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return p, fmt.Errorf("%s: want a mapping with scenarios: at the top", filename)
	}
	top := doc.Content[0]
	lines := bytes.Split(data, []byte("\n"))
	var stack stackSection
	var signoff signoffSection
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, val := top.Content[i], top.Content[i+1]
		if !profileSections[key.Value] {
			continue
		}
		var target any
		switch key.Value {
		case "stack":
			target = &stack
		case "probe":
			target = &p.Probe
		case "signoff":
			target = &signoff
		}
		if err := decodeStrict(val, target); err != nil {
			return p, fmt.Errorf("%s:%d: %s: %v", filename, key.Line, key.Value, err)
		}
		// Blank the section: from its key to the line before the next
		// top-level key (or the end).
		end := len(lines)
		if i+2 < len(top.Content) {
			end = top.Content[i+2].Line - 1
		}
		for l := key.Line - 1; l < end && l < len(lines); l++ {
			lines[l] = nil
		}
	}
	pl, err := plan.ParsePlan(bytes.Join(lines, []byte("\n")), filename)
	if err != nil {
		return p, err
	}
	p.Plan = pl
	p.Stack = fixtures.Config{IdleInTxTimeout: stack.IdleInTxTimeout, MaxConnections: stack.MaxConnections,
		PoolMode: stack.PoolMode, PgBouncerPoolSize: stack.PgBouncerPoolSize, MaxClientConn: stack.MaxClientConn,
		GatewayPoolSize: stack.GatewayPoolSize, Users: stack.Users, Teams: stack.Teams, Seed: stack.Seed,
		GatewayPoolTimeout: stack.GatewayPoolTimeout, GatewayStateless: stack.GatewayStateless, RunDelay: stack.RunDelay,
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

// decodeStrict decodes a YAML node into out, refusing unknown fields.
func decodeStrict(n *yaml.Node, out any) error {
	raw, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return errors.New(strings.Join(te.Errors, "; "))
		}
		return err
	}
	return nil
}

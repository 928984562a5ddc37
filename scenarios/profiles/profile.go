package profiles

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/faults"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// Profile is a complete, reproducible sign-off recipe: a scenario plus what
// to start, how to watch it and which variants to compare. Every run's
// config.json records it (Record), in the format package rundir owns.
type Profile struct {
	Name  string
	File  string
	Stack stack.Config
	Plan  *plan.Plan
	Probe rundir.ProbeSettings
	// VariantBefore and VariantAfter are the gateway variants compared.
	VariantBefore string
	VariantAfter  string
	// Faults is the profile's faults: timeline.
	Faults []faults.Spec
	// RecoverySeconds are the thresholds on the faults' recovery
	// ("max<10"), from the profile's recovery section.
	RecoverySeconds []string
	// Capacity is the profile's capacity: section, for leakbench
	// capacity (capacity.go); a plain run ignores it.
	Capacity CapacitySection
	// Soak is the profile's soak: section (baseline, warmup, cool_down,
	// min_points, min_r2, slopes), leakbench soak's settings where its
	// flags do not say otherwise; a plain run ignores it.
	Soak rundir.SoakSettings
}

// Record is p as config.json records it: the stack, the plan (without
// tokens, secrets masked) and the faults in their owners' JSON.
func (p Profile) Record() (rundir.ProfileRecord, error) {
	r := rundir.ProfileRecord{Name: p.Name, File: p.File, Probe: p.Probe,
		VariantBefore: p.VariantBefore, VariantAfter: p.VariantAfter, RecoverySeconds: p.RecoverySeconds}
	var err error
	if r.Stack, err = json.Marshal(p.Stack); err != nil {
		return r, fmt.Errorf("record the profile's stack: %w", err)
	}
	if p.Plan != nil {
		if r.Plan, err = json.Marshal(p.Plan); err != nil {
			return r, fmt.Errorf("record the profile's plan: %w", err)
		}
	}
	if len(p.Faults) > 0 {
		if r.Faults, err = json.Marshal(p.Faults); err != nil {
			return r, fmt.Errorf("record the profile's faults: %w", err)
		}
	}
	return r, nil
}

type signoffSection struct {
	VariantBefore string `yaml:"variant_before"`
	VariantAfter  string `yaml:"variant_after"`
}

// Lookup loads a built-in profile by name.
func Lookup(name string) (Profile, error) {
	data, ok := Read(name)
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (built in: %s; or give a file with --scenario)", name, strings.Join(Names(), ", "))
	}
	p, err := Parse(data, "profile "+name)
	if err != nil {
		return Profile{}, err
	}
	p.Name = name
	return p, nil
}

// Load reads a profile (or plain scenario) file.
func Load(path string) (Profile, error) {
	return LoadWith(path, scenariofile.Options{})
}

// LoadWith reads a profile (or plain scenario) file, its ${KEY}
// filled from o (the command line's -e values, then the environment).
func LoadWith(path string, o scenariofile.Options) (Profile, error) {
	p, err := profileFrom(path, func(sections ...scenariofile.Section) (*plan.Plan, error) {
		return scenariofile.LoadWith(path, o, sections...)
	})
	if err != nil {
		return Profile{}, err
	}
	p.Name = strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml")
	return p, nil
}

// Parse parses a profile: a scenario file whose stack, probe and
// signoff sections are decoded by the scenario parser too, by the same
// rules (any key spelling, every error naming its line). A plain scenario
// file is a profile with defaults.
func Parse(data []byte, filename string) (Profile, error) {
	return profileFrom(filename, func(sections ...scenariofile.Section) (*plan.Plan, error) {
		return scenariofile.Parse(data, filename, sections...)
	})
}

// profileSections are the sections a profile adds to a scenario file,
// decoded into p, signoff and recovery; the scenario reference's test
// lists their keys from here.
func profileSections(p *Profile, signoff *signoffSection, recovery *recoverySection) []scenariofile.Section {
	return []scenariofile.Section{{Key: "stack", Into: &p.Stack}, {Key: "probe", Into: &p.Probe},
		{Key: "signoff", Into: signoff},
		{Key: "faults", Into: &p.Faults}, {Key: "recovery", Into: recovery},
		{Key: "capacity", Into: &p.Capacity}, {Key: "soak", Into: &p.Soak}}
}

// profileFrom builds a profile from the plan that parse reads along with
// the profile's own sections.
func profileFrom(filename string, parse func(...scenariofile.Section) (*plan.Plan, error)) (Profile, error) {
	p := Profile{File: filename, VariantBefore: "commit-in-finally", VariantAfter: "fixed",
		Probe: rundir.ProbeSettings{Interval: 100 * time.Millisecond, StuckAfter: time.Second, Drain: 10 * time.Second}}
	var signoff signoffSection
	var recovery recoverySection
	pl, err := parse(profileSections(&p, &signoff, &recovery)...)
	if err != nil {
		return p, err
	}
	p.RecoverySeconds = recovery.RecoverySeconds
	if err := checkFaults(filename, pl, p); err != nil { // faults.go
		return p, err
	}
	p.Plan = pl
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

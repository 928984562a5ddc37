package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Config is config.json: the run's resolved configuration, written before
// anything starts, so that even a killed run says what it was. It holds no
// secret: tokens and DSNs are not part of it (their owners exclude them
// from their JSON).
//
// What it records of the stack, the plan and the faults is the JSON their
// owners wrote (stack.Config, plan.Plan, faults.Spec), kept as it is:
// the run directory is a leaf that links none of them. StackFacts reads
// the stack's figures the reports use.
type Config struct {
	// Name labels the run ("before", "after").
	Name string `json:"name"`
	// Variant is the reference gateway's variant ("" for an external
	// target).
	Variant string        `json:"variant"`
	Profile ProfileRecord `json:"profile"`
	// Stack is the stack as started: the profile's with the variant set
	// (stack.Config's JSON).
	Stack   json.RawMessage `json:"stack"`
	Version string          `json:"leakbench_version"`
}

// ProfileRecord is the profile a run played, as config.json records it: a
// complete, reproducible sign-off recipe — a scenario plus what to start,
// how to watch it and which variants to compare.
type ProfileRecord struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Stack is the profile's stack (stack.Config's JSON).
	Stack json.RawMessage `json:"stack"`
	// Plan is the profile's plan, without tokens (plan.Plan's JSON, the
	// scenario file's shape; scenariofile.ReadRecorded reads it back).
	Plan  json.RawMessage `json:"plan"`
	Probe ProbeSettings   `json:"probe"`
	// VariantBefore and VariantAfter are the gateway variants compared.
	VariantBefore string `json:"variant_before"`
	VariantAfter  string `json:"variant_after"`
	// Faults is the profile's faults: timeline ([]faults.Spec's JSON).
	Faults json.RawMessage `json:"faults,omitempty"`
	// RecoverySeconds are the thresholds on the faults' recovery
	// ("max<10"), from the profile's recovery section.
	RecoverySeconds []string `json:"recovery_seconds,omitempty"`
}

// StackFacts are the figures of a stack that reports show: the server's
// idle-in-transaction timeout and the pools' sizes. Zero: not recorded.
type StackFacts struct {
	IdleInTxTimeout   time.Duration
	MaxConnections    int
	PoolMode          string
	PgBouncerPoolSize int
	GatewayPoolSize   int
}

// StackFacts reads the stack's figures from c.Stack, leniently: durations
// may be nanoseconds or Go duration strings (older runs), and a stack that
// is missing or unreadable has none.
func (c *Config) StackFacts() StackFacts {
	var st legacyStack
	if len(c.Stack) == 0 || json.Unmarshal(c.Stack, &st) != nil {
		return StackFacts{}
	}
	return StackFacts{IdleInTxTimeout: time.Duration(st.IdleInTxTimeout), MaxConnections: st.MaxConnections,
		PoolMode: st.PoolMode, PgBouncerPoolSize: st.PgBouncerPoolSize, GatewayPoolSize: st.GatewayPoolSize}
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
	// SlowRelease judges the episodes the service released itself, only
	// late (held stuck_after or longer, end_reason released): the release
	// latency's 99th percentile must stay below it. Zero: StuckAfter.
	// Leaked episodes (nobody released them) are gated strictly apart.
	SlowRelease time.Duration `json:"slow_release,omitempty" yaml:"slow_release"`
	// AllowPinned lets a run pass whose service pool was pinned (its
	// connections at their maximum, none working, as the database saw
	// them): it is still reported. For a load meant to fill the pool.
	AllowPinned bool `json:"allow_pinned,omitempty" yaml:"allow_pinned"`
}

// WriteConfig writes c into dir's config.json, whole or not at all.
func WriteConfig(dir string, c *Config) error {
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ConfigFile, err)
	}
	return WriteFile(filepath.Join(dir, ConfigFile), append(raw, '\n'))
}

// ReadConfig reads dir's config.json. Run directories of older leakbench
// versions are read too: their probe settings stood at the top of the
// profile, and their durations may be Go duration strings.
func ReadConfig(dir string) (*Config, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(raw, &c); err == nil && c.Profile.Probe.Interval > 0 {
		return &c, nil
	}
	// An older layout: read what reports use leniently.
	var old legacyConfig
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	c = Config{Name: old.Name, Variant: old.Variant, Version: old.Version, Stack: old.Stack}
	c.Profile.Name = old.Profile.Name
	c.Profile.Probe.Interval = time.Duration(max(old.Profile.Probe.Interval, old.Profile.ProbeInterval))
	c.Profile.Probe.StuckAfter = time.Duration(max(old.Profile.Probe.StuckAfter, old.Profile.StuckAfter))
	return &c, nil
}

// legacyConfig is the part of an older config.json that reports still
// use, read leniently.
type legacyConfig struct {
	Name    string `json:"name"`
	Variant string `json:"variant"`
	Profile struct {
		Name          string      `json:"name"`
		ProbeInterval anyDuration `json:"probe_interval"`
		StuckAfter    anyDuration `json:"stuck_after"`
		Probe         struct {
			Interval   anyDuration `json:"interval"`
			StuckAfter anyDuration `json:"stuck_after"`
		} `json:"probe"`
	} `json:"profile"`
	Stack   json.RawMessage `json:"stack"`
	Version string          `json:"leakbench_version"`
}

// legacyStack is the part of a recorded stack that StackFacts reads, of
// any version.
type legacyStack struct {
	IdleInTxTimeout   anyDuration `json:"idle_in_transaction_session_timeout"`
	MaxConnections    int         `json:"max_connections"`
	PoolMode          string      `json:"pool_mode"`
	PgBouncerPoolSize int         `json:"pgbouncer_pool_size"`
	GatewayPoolSize   int         `json:"gateway_pool_size"`
}

// anyDuration reads a duration written as nanoseconds or as a Go duration
// string.
type anyDuration time.Duration

func (d *anyDuration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		*d = anyDuration(v)
		return err
	}
	var n int64
	err := json.Unmarshal(b, &n)
	*d = anyDuration(n)
	return err
}

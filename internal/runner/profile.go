// Package runner plays one scenario against one stack with the probes beside
// it and records everything into a run directory; Signoff does it twice —
// leaky variant, then fixed — and compares.
package runner

import (
	"fmt"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios"
)

// Profile is a complete, reproducible sign-off recipe.
type Profile struct {
	Name  string           `json:"name"`
	Stack fixtures.Config  `json:"stack"`
	Load  scenarios.Config `json:"load"`
	// ProbeInterval is the pg_stat_activity sampling interval.
	ProbeInterval time.Duration `json:"probe_interval"`
	// StuckAfter is when an idle-in-transaction episode counts as stuck.
	StuckAfter time.Duration `json:"stuck_after"`
	// Drain is how long the probes keep watching after the load stops, so
	// that leaked sessions are seen to the end (the server's timeout).
	Drain time.Duration `json:"drain"`
	// VariantBefore and VariantAfter are the gateway variants compared.
	VariantBefore string `json:"variant_before"`
	VariantAfter  string `json:"variant_after"`
}

// Profiles returns the built-in profiles by name.
func Profiles() map[string]Profile {
	return map[string]Profile{"ci": CIProfile()}
}

// LookupProfile returns a built-in profile or an error listing the known ones.
func LookupProfile(name string) (Profile, error) {
	p, ok := Profiles()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown profile %q (known: ci)", name)
	}
	return p, nil
}

// CIProfile is sized to finish both runs well inside five minutes on a
// 2-core machine while showing the leak unmistakably: PostgreSQL's
// idle_in_transaction_session_timeout is shortened from the incident's
// 120 s to 5 s, and one tool call in ~12 is a slow report the client gives
// up on after 1 s — the cancellation that makes commit-in-finally leak.
func CIProfile() Profile {
	return Profile{
		Name: "ci",
		Stack: fixtures.Config{
			IdleInTxTimeout:   5 * time.Second,
			MaxConnections:    100,
			PoolMode:          "transaction",
			PgBouncerPoolSize: 40,
			GatewayPoolSize:   40,
			Users:             200,
		},
		Load: scenarios.Config{
			Users:          60,
			Duration:       20 * time.Second,
			RampUp:         2 * time.Second,
			ThinkMin:       100 * time.Millisecond,
			ThinkMax:       400 * time.Millisecond,
			RequestTimeout: time.Second,
			ListToolsEvery: 3,
			Tools: []scenarios.ToolCall{
				{Name: "get_team_tools", Weight: 8},
				{Name: "record_note", Arguments: map[string]any{"note": "load test"}, Weight: 3},
				{Name: "generate_report", Arguments: map[string]any{"seconds": 2}, Weight: 1},
			},
			Seed: 1,
		},
		ProbeInterval: 100 * time.Millisecond,
		// The reference gateway, like ContextForge's middleware, keeps its
		// token-scoping session open for the whole request, and a request
		// lasts at most the client's 1 s timeout: a healthy session is
		// released within ~1 s, so a hold past 2 s is one nobody is using.
		// (The incident's fixed build cycled connections in 1–2 s.)
		StuckAfter: 2 * time.Second,
		Drain:         7 * time.Second,
		VariantBefore: "commit-in-finally",
		VariantAfter:  "fixed",
	}
}

package runner

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

// SignoffOptions configures a before/after sign-off.
type SignoffOptions struct {
	Profile Profile
	Out     string
	Force   bool
	Log     io.Writer
	Version string
	// Env is the stack provider (auto, docker, local); each run gets a
	// fresh stack of it.
	Env string
	// MetricsAddr, if set, serves each run's live Prometheus metrics (see
	// Options.MetricsAddr).
	MetricsAddr string
	// KeepQueryText: see Options.KeepQueryText.
	KeepQueryText bool
	// Shards > 1 plays each run's load as that many leakbench containers
	// on the docker stack (see Options.Shards).
	Shards int
	// Telemetry: see Options.Telemetry; both runs go to it.
	Telemetry Telemetry
}

// Signoff runs the profile against the before variant and then the after
// variant, each on a fresh stack, and writes the comparison into Out.
// Run directories: Out/before, Out/after; comparison: Out/report.md and
// Out/compare.json.
func Signoff(ctx context.Context, o SignoffOptions) (*reports.Comparison, error) {
	if o.Shards > 1 && o.Env != fixtures.ProviderDocker {
		return nil, fmt.Errorf("--shards %d runs the shards as containers of each run's stack: it needs --env docker, not %s", o.Shards, orDefault(o.Env, "auto"))
	}
	if err := rundir.Prepare(o.Out, o.Force); err != nil {
		return nil, err
	}
	runs := []struct{ name, variant string }{{"before", o.Profile.VariantBefore}, {"after", o.Profile.VariantAfter}}
	for _, r := range runs {
		_, err := Run(ctx, Options{Profile: o.Profile, Variant: r.variant, Name: r.name,
			Dir: filepath.Join(o.Out, r.name), Log: o.Log, Version: o.Version, Env: o.Env, MetricsAddr: o.MetricsAddr, KeepQueryText: o.KeepQueryText, Shards: o.Shards,
			Telemetry: o.Telemetry})
		if err != nil {
			return nil, fmt.Errorf("%s run (%s): %w", r.name, r.variant, err)
		}
	}
	// Plots, HTML, Markdown, JSON and JUnit for both runs and the comparison.
	cmp, err := reports.RenderSignoff(o.Out)
	if err != nil {
		return cmp, fmt.Errorf("render reports: %w", err)
	}
	return cmp, nil
}

package runner

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/leakbench/leakbench/reports"
)

// SignoffOptions configures a before/after sign-off.
type SignoffOptions struct {
	Profile Profile
	Out     string
	Force   bool
	Log     io.Writer
	Version string
}

// Signoff runs the profile against the before variant and then the after
// variant, each on a fresh stack, and writes the comparison into Out.
// Run directories: Out/before, Out/after; comparison: Out/report.md and
// Out/compare.json.
func Signoff(ctx context.Context, o SignoffOptions) (*reports.Comparison, error) {
	if err := PrepareDir(o.Out, o.Force); err != nil {
		return nil, err
	}
	runs := []struct{ name, variant string }{{"before", o.Profile.VariantBefore}, {"after", o.Profile.VariantAfter}}
	sums := make([]*reports.Summary, len(runs))
	for i, r := range runs {
		sum, err := Run(ctx, Options{Profile: o.Profile, Variant: r.variant, Name: r.name,
			Dir: filepath.Join(o.Out, r.name), Log: o.Log, Version: o.Version})
		if err != nil {
			return nil, fmt.Errorf("%s run (%s): %w", r.name, r.variant, err)
		}
		sums[i] = sum
	}
	cmp := reports.Compare(sums[0], sums[1], "before", "after")
	if err := cmp.Write(o.Out); err != nil {
		return cmp, err
	}
	return cmp, nil
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// AllProfile is the --profile name that signs off every pattern in turn.
const AllProfile = "all"

// AllPatterns are the built-in profiles `--profile all` signs off, one per
// leak pattern the reference gateway reproduces, in this order. incident
// (commit-in-finally again, at the incident's scale: 7 minutes) is not
// among them.
var AllPatterns = []string{"ci", "waiting", "polling", "upstream", "outside"}

// AllProfiles loads the profiles of AllPatterns.
func AllProfiles() ([]profiles.Profile, error) {
	var ps []profiles.Profile
	for _, name := range AllPatterns {
		p, err := profiles.Lookup(name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// SignoffAllOptions configures SignoffAll. Its SignoffOptions apply to
// every pattern's sign-off; their profiles.Profile is ignored and Out is the
// combined report's directory.
type SignoffAllOptions struct {
	SignoffOptions
	// Profiles replace AllProfiles when set (tests use short ones). Their
	// names must differ: each names its subdirectory.
	Profiles []profiles.Profile
}

// SignoffAll signs off every pattern in turn: each profile's sign-off into
// Out/NAME (its own before/, after/ and reports), then the combined report
// at the top of Out (reports.RenderMultiSignoff) with one verdict, which
// passes only if every pattern's does. A pattern whose sign-off cannot be
// done is recorded as failed with its error and the next one runs; an
// interrupt (ctx done) or a stack that cannot start at all (PostgreSQL or
// PgBouncer missing) stops it and is returned as the error.
func SignoffAll(ctx context.Context, o SignoffAllOptions) (*reports.MultiSignoff, error) {
	profiles := o.Profiles
	if len(profiles) == 0 {
		var err error
		if profiles, err = AllProfiles(); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, p := range profiles {
		if p.Name == "" || p.Name != filepath.Base(p.Name) || p.Name == "." || p.Name == ".." || seen[p.Name] {
			return nil, fmt.Errorf("sign-off of every pattern: profile names must be distinct plain names, got %q", p.Name)
		}
		seen[p.Name] = true
	}
	if err := rundir.Prepare(o.Out, o.Force); err != nil {
		return nil, err
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	var results []reports.PatternSignoff
	for i, p := range profiles {
		fmt.Fprintf(logw, "== pattern %d/%d: %s (%s against %s) into %s\n", i+1, len(profiles), p.Name, p.VariantBefore, p.VariantAfter, filepath.Join(o.Out, p.Name))
		so := o.SignoffOptions
		so.Profile, so.Out, so.Force = p, filepath.Join(o.Out, p.Name), false
		if w := o.Watch; w != nil {
			// Each pattern's sides are parts of their own on the page.
			so.Watch = func(side string) Watch { return w(p.Name + " " + side) }
		}
		start := time.Now()
		cmp, err := Signoff(ctx, so)
		r := reports.PatternSignoff{Name: p.Name, Pattern: p.VariantBefore, VariantBefore: p.VariantBefore, VariantAfter: p.VariantAfter,
			Dir: p.Name, DurationSeconds: time.Since(start).Seconds(), Comparison: cmp}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, fixtures.ErrMissingBinary) {
				return nil, fmt.Errorf("pattern %s: %w", p.Name, err)
			}
			r.Error = redact.String(err.Error())
			fmt.Fprintf(logw, "== pattern %s could not be signed off: %s\n", p.Name, r.Error)
		}
		results = append(results, r)
	}
	m := reports.NewMultiSignoff(results)
	if err := reports.RenderMultiSignoff(o.Out, m); err != nil {
		return m, fmt.Errorf("render the combined report: %w", err)
	}
	return m, nil
}

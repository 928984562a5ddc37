package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// SignoffOptions configures a before/after sign-off.
type SignoffOptions struct {
	Profile profiles.Profile
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
	// Workers plays each run's load as worker processes on this machine
	// (see Options.Workers); WorkerCommand as Options'.
	Workers       workers.Config
	WorkerCommand func() *exec.Cmd

	// Before and After, both set, sign off two running builds of the
	// user's own service (e.g. main and a pull request on two ports)
	// instead of the reference gateway's variants: each run attaches to
	// its target (Env external) and plays the same profile, before first.
	// Set both or neither (ErrSignoffTargets).
	Before, After *SignoffTarget
	// Mode is the verdict's question. Required with Before and After
	// (ErrSignoffTargets wrapping ErrMode when empty: no silent default);
	// empty for the reference gateway's variants means ModeFix.
	Mode verdict.Mode
	// Rules are the regression mode's noise rules (--regression-rule);
	// nil: history.DefaultRules().
	Rules []history.Rule
	// Watch, if set, is called as each side's run begins ("before",
	// "after") and follows that run live: the dashboard's sign-off
	// view shows the two sides side by side.
	Watch func(side string) Watch
}

// sideWatch is the watch of side's run, nil without one.
func (o SignoffOptions) sideWatch(side string) Watch {
	if o.Watch == nil {
		return nil
	}
	return o.Watch(side)
}

// SignoffTarget is one side of a sign-off on the user's own builds: its
// endpoints (target URL, probe DSN, PgBouncer admin DSN, metrics URL,
// tokens) and the engine's connection settings (TLS, OAuth). Fill the
// flags one side does not set from the shared ones before.
type SignoffTarget struct {
	External fixtures.External
	Target   TargetOptions
	// Name labels the side's run in the reports (--before-name, e.g.
	// "main"); default "before" or "after". The run directories are
	// OUT/before and OUT/after whatever the name.
	Name string
}

// ErrSignoffTargets is a sign-off's targets given wrong: one of before and
// after without the other, both the same URL, or no --mode with them. A
// usage error (exit 2), found before anything runs or is written.
var ErrSignoffTargets = errors.New("signoff targets")

// CheckSignoff checks the options a sign-off is given before anything runs
// (Signoff calls it too): usage errors wrap ErrSignoffTargets.
func CheckSignoff(o SignoffOptions) error {
	if (o.Before == nil) != (o.After == nil) {
		return fmt.Errorf("%w: give both --before-target and --after-target (two running builds), or neither (the reference gateway's variants)", ErrSignoffTargets)
	}
	if o.Mode != "" {
		if _, err := verdict.ParseMode(string(o.Mode)); err != nil {
			return fmt.Errorf("%w: %w", ErrSignoffTargets, err)
		}
	}
	if o.Before == nil {
		return nil
	}
	if o.Mode == "" {
		_, err := verdict.ParseMode("")
		return fmt.Errorf("%w: two targets need --mode: %w", ErrSignoffTargets, err)
	}
	if o.Shards > 1 {
		return fmt.Errorf("%w: --shards plays the load as containers of leakbench's own stack; it does not apply to two targets", ErrSignoffTargets)
	}
	for _, t := range []struct {
		side string
		t    *SignoffTarget
	}{{"before", o.Before}, {"after", o.After}} {
		if t.t.External.GatewayURL == "" {
			return fmt.Errorf("%w: no %s target URL", ErrSignoffTargets, t.side)
		}
	}
	if sameURL(o.Before.External.GatewayURL, o.After.External.GatewayURL) {
		return fmt.Errorf("%w: --before-target and --after-target are the same URL (%s): a sign-off compares two builds, give each its own (e.g. two ports)",
			ErrSignoffTargets, redact.URL(o.Before.External.GatewayURL))
	}
	return nil
}

// sameURL: two URLs that reach the same endpoint, the scheme's and host's
// case and a trailing slash aside.
func sameURL(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return strings.TrimSpace(s)
		}
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		if port := u.Port(); port == "" {
			switch u.Scheme {
			case "http":
				u.Host += ":80"
			case "https":
				u.Host += ":443"
			}
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		return u.String()
	}
	return norm(a) == norm(b)
}

// Signoff runs the profile against the before variant and then the after
// variant, each on a fresh stack, and writes the comparison into Out.
// Run directories: Out/before, Out/after; comparison: Out/report.md and
// Out/compare.json.
//
// With Before and After the two runs attach to the user's own running
// builds instead, one after the other, and the comparison asks o.Mode.
func Signoff(ctx context.Context, o SignoffOptions) (*reports.Comparison, error) {
	if err := CheckSignoff(o); err != nil {
		return nil, err
	}
	if o.Before != nil {
		return signoffTargets(ctx, o)
	}
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
			Telemetry: o.Telemetry, Workers: o.Workers, WorkerCommand: o.WorkerCommand, Watch: o.sideWatch(r.name)})
		if err != nil {
			return nil, fmt.Errorf("%s run (%s): %w", r.name, r.variant, err)
		}
	}
	return renderSignoff(o)
}

// signoffTargets plays the profile against the user's before build and
// then its after build, each attached as an external stack, and judges
// them under o.Mode.
func signoffTargets(ctx context.Context, o SignoffOptions) (*reports.Comparison, error) {
	if err := rundir.Prepare(o.Out, o.Force); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		name string
		t    *SignoffTarget
	}{{"before", o.Before}, {"after", o.After}} {
		_, err := Run(ctx, Options{Profile: o.Profile, Name: orDefault(r.t.Name, r.name), Dir: filepath.Join(o.Out, r.name), Log: o.Log, Version: o.Version,
			Env: fixtures.ProviderExternal, External: r.t.External, Target: r.t.Target,
			MetricsAddr: o.MetricsAddr, KeepQueryText: o.KeepQueryText, Telemetry: o.Telemetry, Workers: o.Workers, WorkerCommand: o.WorkerCommand,
			Watch: o.sideWatch(r.name)})
		if err != nil {
			return nil, fmt.Errorf("%s run (%s): %w", r.name, redact.URL(r.t.External.GatewayURL), err)
		}
	}
	return renderSignoff(o)
}

// renderSignoff writes the plots, HTML, Markdown, JSON and JUnit of both
// runs and of their comparison under o.Mode (ModeFix when empty).
func renderSignoff(o SignoffOptions) (*reports.Comparison, error) {
	mode := o.Mode
	if mode == "" {
		mode = verdict.ModeFix
	}
	cmp, err := reports.RenderSignoffWith(o.Out, func(before, after *reports.Run) (*reports.Comparison, error) {
		return render.JudgeRuns(before, after, mode, o.Rules)
	})
	if err != nil {
		return cmp, fmt.Errorf("render reports: %w", err)
	}
	return cmp, nil
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// loadFlags are what to load: a built-in profile or a scenario file, its
// ${KEY} values (-e), and k6's shortcuts over its scenario (--vus,
// --duration, --iterations, --scenario-name), defined once for run,
// signoff, soak and capacity (#39).
type loadFlags struct {
	profile      string
	scenario     string
	vars         listFlag
	vus          int
	duration     time.Duration
	iterations   int64
	scenarioName string
}

// addLoadFlags defines the load flags; defaultProfile is the command's
// built-in profile and profileHelp says what it is for. shortcuts are
// those of --vus, --duration and --iterations that make sense for the
// command (a soak holds users for a time; a capacity search sets both
// itself): a command without one does not define it.
func addLoadFlags(fs *flag.FlagSet, defaultProfile, profileHelp string, shortcuts ...string) *loadFlags {
	l := &loadFlags{}
	fs.StringVar(&l.profile, "profile", defaultProfile, profileHelp)
	fs.StringVar(&l.scenario, "scenario", "", "a profile or scenario `FILE` to use instead of --profile (see scenarios/profiles/*.yaml)")
	fs.Var(&l.vars, "e", "`KEY=VALUE` for the scenario file's ${KEY}, before the environment's (repeatable)")
	has := cliflag.Names(shortcuts...)
	if has("vus") {
		fs.IntVar(&l.vus, "vus", 0, "play the scenario with `N` users (constant-vus, or per-vu-iterations with --iterations)")
	}
	if has("duration") {
		fs.DurationVar(&l.duration, "duration", 0, "play the scenario for `D` (constant-vus; with --iterations, its longest)")
	}
	if has("iterations") {
		fs.Int64Var(&l.iterations, "iterations", 0, "each user plays the flow `N` times (per-vu-iterations)")
	}
	fs.StringVar(&l.scenarioName, "scenario-name", "", "play only the scenario `NAME` of a file of several (the one --vus, --duration and --iterations change)")
	return l
}

// overrides are the shortcuts as the plan takes them.
func (l *loadFlags) overrides() plan.Overrides {
	return plan.Overrides{Scenario: l.scenarioName, VUs: l.vus, Duration: l.duration, Iterations: l.iterations}
}

// load reads the profile or scenario file and applies the shortcuts. A
// bad -e value, a missing or unreadable scenario file, or a shortcut the
// plan cannot take are usage errors (exit 2), before any load; a file
// that does not parse is not (exit 1).
func (l *loadFlags) load() (profiles.Profile, error) {
	vars, err := scenariofile.ParseVars(l.vars)
	if err != nil {
		return profiles.Profile{}, fmt.Errorf("%w: -e: %w", cliflag.ErrUsage, err)
	}
	var p profiles.Profile
	if l.scenario != "" {
		if err := readable(l.scenario); err != nil {
			return p, fmt.Errorf("%w: --scenario: read scenario file: %w", cliflag.ErrUsage, err)
		}
		// A file that does not parse is no usage error: git bisect skips
		// a commit whose scenario it cannot read (exit 125), where a usage
		// error would stop the bisect.
		if p, err = profiles.LoadWith(l.scenario, scenariofile.Options{Vars: vars}); err != nil {
			return p, err
		}
	} else {
		if len(vars) > 0 {
			return p, fmt.Errorf("%w: -e fills a scenario file's ${KEY}; give the file with --scenario FILE", cliflag.ErrUsage)
		}
		if p, err = loadProfile(l.profile, ""); err != nil {
			return p, err
		}
	}
	if err := l.apply(&p); err != nil {
		return p, err
	}
	return p, nil
}

// readable: path is a file this process can open.
func readable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// apply applies the shortcuts to p's plan.
func (l *loadFlags) apply(p *profiles.Profile) error {
	o := l.overrides()
	if o.IsZero() {
		return nil
	}
	if p.Plan == nil {
		return fmt.Errorf("%w: --vus, --duration, --iterations and --scenario-name change a scenario; profile %s has none", cliflag.ErrUsage, p.Name)
	}
	if err := p.Plan.Override(o); err != nil {
		if errors.Is(err, plan.ErrOverride) {
			return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
		}
		return err
	}
	return nil
}

// given names the load shortcuts given, for commands that refuse them.
func (l *loadFlags) given() string {
	var g []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"--vus", l.vus != 0}, {"--duration", l.duration != 0}, {"--iterations", l.iterations != 0}, {"--scenario-name", l.scenarioName != ""}, {"-e", len(l.vars) > 0}} {
		if f.set {
			g = append(g, f.name)
		}
	}
	return strings.Join(g, ", ")
}

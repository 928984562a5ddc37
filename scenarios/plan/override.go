package plan

// k6's command-line shortcuts (--vus, --duration, --iterations) over a
// plan read from a file, and the choice of one of its scenarios.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrOverride is matched by every error of [Plan.Override]: a usage error
// (the command line asks for something the plan cannot be made to do).
var ErrOverride = errors.New("cannot override the scenario")

// Overrides are the command line's say over a plan's scenarios, as k6's
// --vus, --duration and --iterations are. A zero field changes nothing.
type Overrides struct {
	// Scenario names the one scenario to run (--scenario-name); the
	// others are dropped, with the thresholds that name them by their
	// scenario tag. "" keeps every scenario, and then VUs, Duration and
	// Iterations need a plan of one scenario.
	Scenario string
	// VUs is the number of users (--vus).
	VUs int
	// Duration is how long the users play (--duration).
	Duration time.Duration
	// Iterations is how many times each user plays the flow
	// (--iterations). k6's --iterations is shared among its users; here
	// every user runs them (k6's per-vu-iterations executor), so the run
	// plays VUs × Iterations flows.
	Iterations int64
}

// IsZero reports whether o changes nothing.
func (o Overrides) IsZero() bool { return o == Overrides{} }

// Override applies o to p, as k6 applies its shortcuts: the scenario
// keeps its flow, data, startTime and protocol settings, and its executor
// becomes the simplest one that does what the command line says —
//
//   - Iterations (with or without VUs, Duration): per-vu-iterations,
//     Duration as its maxDuration;
//   - VUs and/or Duration: constant-vus.
//
// What the command line leaves out comes from the scenario: its users
// (vus; a ramp's highest target; an arrival rate's maxVUs) and its length
// (duration; the sum of its stages). An error (a usage error, matching
// ErrOverride) names the scenarios when a plan of several is given no
// Scenario, and says which value is out of range; p is unchanged then.
func (p *Plan) Override(o Overrides) error {
	if o.IsZero() {
		return nil
	}
	names := make([]string, len(p.Scenarios))
	for i, s := range p.Scenarios {
		names[i] = s.Name
	}
	idx := 0
	switch {
	case o.Scenario != "":
		idx = slices.Index(names, o.Scenario)
		if idx < 0 {
			return fmt.Errorf("%w: no scenario %q in %s; it has %s", ErrOverride, o.Scenario, p.fileName(), strings.Join(names, ", "))
		}
	case len(p.Scenarios) != 1:
		return fmt.Errorf("%w: %s has %d scenarios (%s); name the one to override with --scenario-name", ErrOverride, p.fileName(), len(names), strings.Join(names, ", "))
	}
	switch {
	case o.VUs < 0 || o.VUs > MaxUsers:
		return fmt.Errorf("%w: --vus %d: want 1 to %d users", ErrOverride, o.VUs, MaxUsers)
	case o.Duration < 0 || o.Duration > MaxDuration:
		return fmt.Errorf("%w: --duration %s: want more than 0 and at most %s", ErrOverride, o.Duration, MaxDuration)
	case o.Iterations < 0:
		return fmt.Errorf("%w: --iterations %d: want at least 1", ErrOverride, o.Iterations)
	}
	before := *p
	s := p.Scenarios[idx]
	if o.VUs != 0 || o.Duration != 0 || o.Iterations != 0 {
		s = overrideScenario(s, o)
	}
	if o.Scenario != "" {
		s.StartTime = 0 // alone, it need not wait for the others
		p.Thresholds = slices.DeleteFunc(slices.Clone(p.Thresholds), func(t Threshold) bool {
			other, ok := thresholdScenario(t.Metric)
			return ok && other != s.Name
		})
		p.Scenarios = []Scenario{s}
	} else {
		p.Scenarios = slices.Clone(p.Scenarios)
		p.Scenarios[idx] = s
	}
	// The new scenario must hold as the file's did (unique data rows
	// enough for the users, say).
	if err := p.Validate(); err != nil {
		*p = before
		return fmt.Errorf("%w: %w", ErrOverride, err)
	}
	return nil
}

// overrideScenario returns s with its executor replaced as Override says.
func overrideScenario(s Scenario, o Overrides) Scenario {
	vus, length := s.users(), s.length()
	if o.VUs != 0 {
		vus = o.VUs
	}
	if o.Duration != 0 {
		length = Duration(o.Duration)
	}
	n := Scenario{Name: s.Name, StartTime: s.StartTime, GracefulStop: s.GracefulStop, Timeout: s.Timeout,
		ProtocolVersion: s.ProtocolVersion, Cache: s.Cache, Listen: s.Listen, Flow: s.Flow, Data: s.Data,
		VUs: vus, line: s.line, lines: s.lines}
	if o.Iterations != 0 {
		n.Executor, n.Iterations = ExecPerVUIterations, o.Iterations
		n.MaxDuration = s.MaxDuration
		if o.Duration != 0 {
			n.MaxDuration = Duration(o.Duration)
		}
		if n.MaxDuration == 0 {
			n.MaxDuration = Duration(10 * time.Minute) // k6's default
		}
		return n
	}
	n.Executor, n.Duration = ExecConstantVUs, length
	if o.Duration == 0 && s.Executor == ExecPerVUIterations {
		n.Duration = s.MaxDuration // the longest the scenario was to run
	}
	return n
}

// users is how many users s runs at most.
func (s Scenario) users() int {
	switch s.Executor {
	case ExecRampingVUs:
		m := s.StartVUs
		for _, st := range s.Stages {
			m = max(m, st.Target)
		}
		return max(m, 1)
	case ExecConstantArrivalRate, ExecRampingArrivalRate:
		return max(s.MaxVUs, s.PreAllocatedVUs, 1)
	case ExecExternallyControlled:
		return max(s.MaxVUs, 1)
	}
	return max(s.VUs, 1)
}

// length is how long s plays (its stages' sum for the ramping ones).
func (s Scenario) length() Duration {
	if len(s.Stages) > 0 {
		var d Duration
		for _, st := range s.Stages {
			d += st.Duration
		}
		return d
	}
	return s.Duration
}

// thresholdScenario returns the scenario tag of a threshold's metric
// ("mcp_req_failed{scenario:api}" → "api", true).
func thresholdScenario(metric string) (string, bool) {
	_, tags, ok := strings.Cut(metric, "{")
	if !ok {
		return "", false
	}
	for f := range strings.SplitSeq(strings.TrimSuffix(tags, "}"), ",") {
		k, v, _ := strings.Cut(f, ":")
		if strings.TrimSpace(k) == "scenario" {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// fileName names the plan's file in messages ("the plan" for one built in
// Go).
func (p *Plan) fileName() string {
	if p.file == "" {
		return "the plan"
	}
	return p.file
}

package capacity

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// What a search steps.
const (
	LoadUsers = "users"
	LoadRate  = "rate"
)

// Pool limits.
const (
	PoolAny       = "any"
	PoolExhausted = "exhausted"
	PoolPinned    = "pinned"
	PoolOff       = "off"
)

// ErrSpec marks a search that cannot be done as asked: a bad capacity:
// section or flag, a scenario the search cannot step.
var ErrSpec = errors.New("capacity")

// Spec is a resolved search: the profile's capacity: section with the
// flags over it and the defaults filled in.
type Spec struct {
	Load   string
	Start  int
	Max    int
	Factor float64
	// ResolutionFrac (a share of the last good load) or ResolutionAbs (a
	// load) bounds the bisection; Resolution is how it was written.
	ResolutionFrac float64
	ResolutionAbs  int
	Resolution     string
	Stage          time.Duration
	MaxStages      int
	Min            int
	// StuckSessions is the most stuck sessions allowed at one instant
	// (-1: no such limit); ErrorRate the most failed share (-1: none).
	StuckSessions int
	Pool          string
	ErrorRate     float64
	// Thresholds are the latency and other limits, in k6's syntax: the
	// section's, then the scenario file's own.
	Thresholds []plan.Threshold
	// Generator: a saturated generator stops the search.
	Generator bool
}

// Defaults of a search whose section and flags leave them out.
const (
	defaultStart = 10
	// defaultMax stays at the 50,000 users a plan held before worker
	// processes: a search that doubles past it needs --workers or
	// shards, which the user asks for with max.
	defaultMax       = 50000
	defaultFactor    = 2.0
	defaultStage     = 10 * time.Second
	defaultMaxStages = 12
	defaultRes       = "10%"
	// minStage is the shortest stage whose settling can be judged:
	// settled leaves the first second out and wants three whole seconds
	// after it, which a 3 s stage has only when its per-second points
	// come late.
	minStage = 4 * time.Second
	// maxStagesBound bounds every search's count of stages.
	maxStagesBound = 40
)

// Resolve checks section (the profile's, flags already written over it)
// against the profile's plan and returns the search it asks for. Every
// problem is an error wrapping ErrSpec that names the key.
func Resolve(sec profiles.CapacitySection, p *plan.Plan) (Spec, error) {
	s := Spec{Load: orStr(sec.Load, LoadUsers), Start: sec.Start, Max: sec.Max, Factor: sec.Factor,
		Stage: sec.Stage, MaxStages: sec.MaxStages, Min: sec.Min, Pool: orStr(sec.Pool, PoolAny), StuckSessions: -1, ErrorRate: -1, Generator: true}
	bad := func(format string, a ...any) (Spec, error) {
		return s, fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...)
	}
	if s.Load != LoadUsers && s.Load != LoadRate {
		return bad("load %q: want users or rate", s.Load)
	}
	if s.Start == 0 {
		s.Start = defaultStart
	}
	if s.Max == 0 {
		s.Max = defaultMax
	}
	if s.Factor == 0 {
		s.Factor = defaultFactor
	}
	if s.Stage == 0 {
		s.Stage = defaultStage
	}
	if s.MaxStages == 0 {
		s.MaxStages = defaultMaxStages
	}
	switch {
	case s.Start < 1 || s.Start > plan.MaxUsers:
		return bad("start %d: want a load of 1 to %d", s.Start, plan.MaxUsers)
	case s.Max < s.Start || s.Max > plan.MaxUsers:
		return bad("max %d: want a load of start (%d) to %d", s.Max, s.Start, plan.MaxUsers)
	case !(s.Factor > 1 && s.Factor <= 10):
		return bad("factor %g: want more than 1, at most 10", s.Factor)
	case s.Stage < minStage:
		return bad("stage %s: a stage shorter than %s cannot be seen to settle", s.Stage, minStage)
	case s.MaxStages < 2 || s.MaxStages > maxStagesBound:
		return bad("max_stages %d: want 2 to %d", s.MaxStages, maxStagesBound)
	case s.Min < 0:
		return bad("min %d: want a load, or 0 for none", s.Min)
	case s.Min > s.Max:
		return bad("min %d is above max %d: the search can never reach it; raise max or lower min", s.Min, s.Max)
	}
	if err := s.resolution(orStr(sec.Resolution, defaultRes)); err != nil {
		return s, err
	}
	switch s.Pool {
	case PoolAny, PoolExhausted, PoolPinned, PoolOff:
	default:
		return bad("pool %q: want exhausted, pinned, any or off", s.Pool)
	}
	switch sec.Generator {
	case "", "on", "true":
	case "off", "false":
		s.Generator = false
	default:
		return bad("generator %q: want on or off", sec.Generator)
	}
	if sec.StuckSessions != "" {
		n, err := strconv.Atoi(sec.StuckSessions)
		if err != nil || n < 0 {
			return bad("stuck_sessions %q: want the most stuck sessions allowed at once, 0 or more", sec.StuckSessions)
		}
		s.StuckSessions = n
	}
	if sec.ErrorRate != "" {
		r, err := strconv.ParseFloat(strings.TrimSuffix(sec.ErrorRate, "%"), 64)
		if strings.HasSuffix(sec.ErrorRate, "%") {
			r /= 100
		}
		if err != nil || !(r >= 0 && r < 1) {
			return bad("error_rate %q: want a share of failed requests in [0, 1) (0.01 or 1%%)", sec.ErrorRate)
		}
		s.ErrorRate = r
		s.Thresholds = append(s.Thresholds, plan.Threshold{Metric: threshold.MetricReqFailed, Expression: "rate<=" + strconv.FormatFloat(r, 'g', -1, 64)})
	}
	metrics := make([]string, 0, len(sec.Thresholds))
	for m := range sec.Thresholds {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	for _, m := range metrics {
		for _, e := range sec.Thresholds[m] {
			s.Thresholds = append(s.Thresholds, plan.Threshold{Metric: m, Expression: e})
		}
	}
	if p == nil {
		return bad("the profile has no scenario to step")
	}
	s.Thresholds = append(s.Thresholds, p.Thresholds...)
	if s.StuckSessions < 0 && s.Pool == PoolOff && len(s.Thresholds) == 0 && s.Load == LoadUsers {
		return bad("no limit: set stuck_sessions, pool, error_rate or thresholds (or the scenario's thresholds), or nothing can trip")
	}
	if _, err := stagePlan(p, s, s.Start); err != nil {
		return s, err
	}
	return s, nil
}

// resolution reads "10%" (a share of the last good load) or "5" (a load).
func (s *Spec) resolution(r string) error {
	s.Resolution = r
	if pct, ok := strings.CutSuffix(r, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return fmt.Errorf("%w: resolution %q: want a share of the load, 0%% to 100%%, or a whole load (5)", ErrSpec, r)
		}
		s.ResolutionFrac = f / 100
		return nil
	}
	n, err := strconv.Atoi(r)
	if err != nil || n < 1 {
		return fmt.Errorf("%w: resolution %q: want a share of the load (10%%) or a whole load of 1 or more (5)", ErrSpec, r)
	}
	s.ResolutionAbs = n
	return nil
}

// step is the resolution at load good: how far apart the last good and
// the first bad load may be when the search stops.
func (s Spec) step(good int) int {
	if s.ResolutionAbs > 0 {
		return s.ResolutionAbs
	}
	return max(1, int(math.Ceil(s.ResolutionFrac*float64(good))))
}

// Unit is how the load is counted.
func (s Spec) Unit(p *plan.Plan) string {
	if s.Load == LoadUsers {
		return "users"
	}
	if sc := stepped(p); sc != nil && sc.TimeUnit.D() > 0 && sc.TimeUnit.D() != time.Second {
		return "iterations/" + sc.TimeUnit.String()
	}
	return "iterations/s"
}

// Limits are the limits in words, for the report.
func (s Spec) Limits(probed bool) []string {
	var out []string
	if s.StuckSessions >= 0 && probed {
		out = append(out, fmt.Sprintf("stuck sessions ≤ %d at once", s.StuckSessions))
	}
	if s.Pool != PoolOff && probed {
		switch s.Pool {
		case PoolAny:
			out = append(out, "pool neither exhausted nor pinned")
		case PoolExhausted:
			out = append(out, "pool not exhausted")
		case PoolPinned:
			out = append(out, "pool not pinned")
		}
	}
	for _, t := range s.Thresholds {
		out = append(out, t.Metric+" "+t.Expression)
	}
	if s.Load == LoadRate {
		out = append(out, "the arrival rate sustained (no dropped iterations)")
	}
	if s.Generator {
		out = append(out, "the generator kept up (else: inconclusive)")
	}
	return out
}

// stepped is the one scenario a search steps: the plan's only one.
func stepped(p *plan.Plan) *plan.Scenario {
	if p == nil || len(p.Scenarios) != 1 {
		return nil
	}
	return &p.Scenarios[0]
}

// stagePlan is p at one stage: its scenario's users (or rate) set to
// load, held for the stage, judged by the search's thresholds.
func stagePlan(p *plan.Plan, s Spec, load int) (*plan.Plan, error) {
	if len(p.Scenarios) != 1 {
		return nil, fmt.Errorf("%w: the search steps one scenario, and the plan has %d: keep one", ErrSpec, len(p.Scenarios))
	}
	cp := *p
	cp.Scenarios = append([]plan.Scenario(nil), p.Scenarios...)
	sc := &cp.Scenarios[0]
	switch {
	case s.Load == LoadUsers && sc.Executor == plan.ExecConstantVUs:
		sc.VUs = load
	case s.Load == LoadRate && sc.Executor == plan.ExecConstantArrivalRate:
		sc.Rate = load
		if sc.MaxVUs < sc.PreAllocatedVUs {
			sc.MaxVUs = sc.PreAllocatedVUs
		}
	default:
		want := plan.ExecConstantVUs
		if s.Load == LoadRate {
			want = plan.ExecConstantArrivalRate
		}
		return nil, fmt.Errorf("%w: load %s steps a %s scenario; scenario %s is %s", ErrSpec, s.Load, want, sc.Name, sc.Executor)
	}
	sc.Duration = plan.Duration(s.Stage)
	sc.StartTime = 0
	cp.Thresholds = append([]plan.Threshold(nil), s.Thresholds...)
	if err := cp.Validate(); err != nil {
		return nil, fmt.Errorf("%w: the plan at %d %s: %w", ErrSpec, load, s.Load, err)
	}
	return &cp, nil
}

func orStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CheckPlan says whether the search s can step plan p, before anything
// runs: one scenario of the executor the load needs, valid at the first
// stage's load (signoff --capacity asks before its sign-off's runs).
func CheckPlan(p *plan.Plan, s Spec) error {
	_, err := stagePlan(p, s, s.Start)
	return err
}

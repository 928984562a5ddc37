package history

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rule says when one figure has regressed against its baseline. Noise on a
// shared CI machine moves every figure a little, so a regression needs
// both: the current value worse than the baseline by the Ratio, and by more
// than the Floor in the figure's own unit. For a figure where higher is
// worse: current > Ratio × baseline AND current − baseline > Floor. Where
// lower is worse (the request rate): current < baseline / Ratio AND
// baseline − current > Floor.
type Rule struct {
	// Figure is the figure's JSON name in Figures.
	Figure string
	Label  string
	Unit   string
	// LowerIsWorse: the figure regresses when it falls (a rate).
	LowerIsWorse bool
	Ratio        float64
	Floor        float64
	// needs says which half of a run must have been recorded.
	needs  string
	value  func(Figures) float64
	format func(float64) string
}

// DefaultRules are the baseline rules; FORMAT.md explains each.
func DefaultRules() []Rule {
	return []Rule{
		{Figure: "release_p99_seconds", Label: "Connection release p99", Unit: "s", Ratio: 1.5, Floor: 0.25, needs: "probe",
			value: func(f Figures) float64 { return f.ReleaseP99Seconds }, format: fmtSeconds},
		{Figure: "max_stuck_idle_in_tx", Label: "Stuck idle in transaction (max at one instant)", Unit: "sessions", Ratio: 1.5, Floor: 0, needs: "probe",
			value: func(f Figures) float64 { return float64(f.MaxStuckIdleInTx) }, format: fmtCount},
		{Figure: "app_pool_acquire_waits", Label: "Service pool acquires that waited", Unit: "acquires", Ratio: 2, Floor: 20, needs: "probe",
			value: func(f Figures) float64 { return f.AppPoolAcquireWaits }, format: fmtCount},
		{Figure: "pool_pinned_seconds", Label: "Pool pinned (longest, either view)", Unit: "s", Ratio: 1.5, Floor: 2, needs: "probe",
			value: func(f Figures) float64 { return f.PoolPinnedSeconds }, format: fmtSeconds},
		{Figure: "pool_worst_wait_seconds", Label: "PgBouncer worst wait", Unit: "s", Ratio: 2, Floor: 0.25, needs: "probe",
			value: func(f Figures) float64 { return f.PoolWorstWaitSeconds }, format: fmtSeconds},
		{Figure: "request_rate_per_second", Label: "Request rate", Unit: "requests/s", LowerIsWorse: true, Ratio: 1.25, Floor: 5, needs: "load",
			value: func(f Figures) float64 { return f.RequestRate }, format: func(v float64) string { return fmt.Sprintf("%.1f/s", v) }},
		{Figure: "error_rate", Label: "Error rate", Unit: "fraction", Ratio: 2, Floor: 0.01, needs: "load",
			value: func(f Figures) float64 { return f.ErrorRate }, format: func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }},
		{Figure: "latency_p95_ms", Label: "Request latency p95", Unit: "ms", Ratio: 2, Floor: 250, needs: "load",
			value: func(f Figures) float64 { return f.LatencyP95Ms }, format: func(v float64) string { return fmt.Sprintf("%.1f ms", v) }},
		{Figure: "latency_p99_ms", Label: "Request latency p99", Unit: "ms", Ratio: 2, Floor: 250, needs: "load",
			value: func(f Figures) float64 { return f.LatencyP99Ms }, format: func(v float64) string { return fmt.Sprintf("%.1f ms", v) }},
	}
}

func fmtSeconds(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.0f ms", v*1000)
	}
	return fmt.Sprintf("%.2f s", v)
}

func fmtCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ErrRule is a rule override that does not parse.
var ErrRule = errors.New("bad regression rule")

// SetRule overrides one rule from "FIGURE=RATIO:FLOOR" (e.g.
// "release_p99_seconds=2:0.2"), as --regression-rule gives it.
func SetRule(rules []Rule, spec string) error {
	name, val, ok := strings.Cut(spec, "=")
	rs, fl, ok2 := strings.Cut(val, ":")
	if !ok || !ok2 {
		return fmt.Errorf("%w %q: want FIGURE=RATIO:FLOOR, e.g. release_p99_seconds=1.5:0.1", ErrRule, spec)
	}
	ratio, err1 := strconv.ParseFloat(rs, 64)
	floor, err2 := strconv.ParseFloat(fl, 64)
	if err1 != nil || err2 != nil || ratio < 1 || floor < 0 || math.IsInf(ratio, 0) || math.IsInf(floor, 0) {
		return fmt.Errorf("%w %q: RATIO is a number ≥ 1, FLOOR a number ≥ 0", ErrRule, spec)
	}
	var names []string
	for i := range rules {
		if rules[i].Figure == strings.TrimSpace(name) {
			rules[i].Ratio, rules[i].Floor = ratio, floor
			return nil
		}
		names = append(names, rules[i].Figure)
	}
	return fmt.Errorf("%w %q: no figure %q (known: %s)", ErrRule, spec, name, strings.Join(names, ", "))
}

// Delta is one figure, baseline against current.
type Delta struct {
	Figure   string  `json:"figure"`
	Label    string  `json:"label"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	// Change is current − baseline, in Unit.
	Change float64 `json:"change"`
	// Ratio is current / baseline; 0 when the baseline is 0.
	Ratio     float64 `json:"ratio"`
	Regressed bool    `json:"regressed"`
	// Skipped: one of the runs did not record this figure.
	Skipped bool `json:"skipped,omitempty"`
	// Rule is the rule applied, in words.
	Rule string `json:"rule"`

	format func(float64) string
}

// BaselineText is the baseline value as the tables show it.
func (d Delta) BaselineText() string { return d.text(d.Baseline) }

// CurrentText is the current value as the tables show it.
func (d Delta) CurrentText() string { return d.text(d.Current) }

// ChangeText is the change as the tables show it: signed, with the ratio.
func (d Delta) ChangeText() string {
	if d.Skipped {
		return "not measured"
	}
	sign := "+"
	if d.Change < 0 {
		sign = "−"
	}
	s := sign + d.text(math.Abs(d.Change))
	if d.Ratio > 0 {
		s += fmt.Sprintf(" (×%.2f)", d.Ratio)
	}
	return s
}

func (d Delta) text(v float64) string {
	if d.format != nil {
		return d.format(v)
	}
	for _, r := range DefaultRules() {
		if r.Figure == d.Figure {
			return r.format(v)
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// CompareFigures applies the rules to a baseline and the current figures.
func CompareFigures(base, cur Figures, rules []Rule) []Delta {
	var out []Delta
	for _, r := range rules {
		d := Delta{Figure: r.Figure, Label: r.Label, Unit: r.Unit, format: r.format}
		if r.LowerIsWorse {
			d.Rule = fmt.Sprintf("regresses below baseline ÷ %g and more than %s under it", r.Ratio, r.format(r.Floor))
		} else {
			d.Rule = fmt.Sprintf("regresses above %g × baseline and more than %s over it", r.Ratio, r.format(r.Floor))
		}
		recorded := func(f Figures) bool {
			if r.needs == "load" {
				return f.LoadRecorded
			}
			return f.ProbeRecorded
		}
		if !recorded(base) || !recorded(cur) {
			d.Skipped = true
			out = append(out, d)
			continue
		}
		d.Baseline, d.Current = r.value(base), r.value(cur)
		d.Change = d.Current - d.Baseline
		if d.Baseline != 0 {
			d.Ratio = d.Current / d.Baseline
		}
		if r.LowerIsWorse {
			d.Regressed = d.Current < d.Baseline/r.Ratio && d.Baseline-d.Current > r.Floor
		} else {
			d.Regressed = d.Current > r.Ratio*d.Baseline && d.Current-d.Baseline > r.Floor
		}
		out = append(out, d)
	}
	return out
}

// BaselineLast asks for the newest accepted entry.
const BaselineLast = "last"

// SelectBaseline finds the baseline entry ref names. "last" is the newest
// entry that passed, of the same profile and the same (after) variant; it
// returns nil and no error when there is none yet (the very first run). Any
// other ref is an entry ID (or the unique start of one) and must exist:
// ErrNotFound otherwise.
func SelectBaseline(entries []*Entry, ref, profile, variant string) (*Entry, error) {
	if ref != BaselineLast {
		return Find(entries, ref)
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Pass && e.Profile == profile && e.Environment.Variant == variant {
			return e, nil
		}
	}
	return nil, nil
}

// Mismatches names what differs between the baseline and the current
// entry in ways that make the figures hard to compare (another profile,
// provider, pool size, PostgreSQL or host); each is a warning, not a
// failure.
func Mismatches(base, cur *Entry) []string {
	var out []string
	add := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s differs: baseline %q, now %q", what, a, b))
		}
	}
	add("profile", base.Profile, cur.Profile)
	add("variant", base.Environment.Variant, cur.Environment.Variant)
	add("provider", base.Environment.Provider, cur.Environment.Provider)
	add("PostgreSQL", base.Environment.PostgresVersion, cur.Environment.PostgresVersion)
	add("pool mode", base.Environment.PoolMode, cur.Environment.PoolMode)
	add("gateway pool size", strconv.Itoa(base.Environment.GatewayPoolSize), strconv.Itoa(cur.Environment.GatewayPoolSize))
	add("CPUs", strconv.Itoa(base.Environment.CPUs), strconv.Itoa(cur.Environment.CPUs))
	return out
}

// Judge compares cur with base under the rules and says whether it
// regressed. ref is what was asked for ("last" or an ID); base is nil when
// "last" found no accepted entry yet, which is no regression: a first run
// must not fail.
func Judge(ref string, base, cur *Entry, rules []Rule) *BaselineInfo {
	b := &BaselineInfo{Requested: ref}
	if base == nil {
		b.Note = fmt.Sprintf("no accepted entry of profile %q and variant %q in the history yet; this one is compared with nothing and, when it passes, becomes the baseline", cur.Profile, cur.Environment.Variant)
		return b
	}
	b.ID, b.Release = base.ID, base.Release
	b.Deltas = CompareFigures(base.Figures, cur.Figures, rules)
	for _, d := range b.Deltas {
		b.Regressed = b.Regressed || d.Regressed
	}
	if m := Mismatches(base, cur); len(m) > 0 {
		b.Note = "the figures may not be comparable: " + strings.Join(m, "; ")
	}
	if !base.Pass {
		b.Note = strings.TrimPrefix(b.Note+"; the baseline itself did not pass", "; ")
	}
	return b
}

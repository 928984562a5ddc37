package verdict

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/derive"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Regression is the checks of a sign-off that asks whether after is no
// worse than before (ModeRegression): both runs completed; no leaked
// session, no held session and no pinned pool in after where before had
// none; no threshold that before met and after failed (of the runs'
// thresholds); and no key figure (deltas) worse beyond its noise rule. Two
// healthy runs pass; a leaky after of a healthy before fails, each check
// naming what regressed.
func Regression(b, a *rundir.Summary, beforeThresholds, afterThresholds []rundir.Threshold, deltas []Delta) []Check {
	checks := completed(b, a, false)
	if b.Probe != nil && a.Probe != nil {
		checks = append(checks,
			newProblemCheck(checkNoNewLeak, LeakedCount(b), LeakedCount(a), "leaked", func() string { return LeakedPhrase(a) }),
			newProblemCheck(checkNoNewHeld, HeldCount(b), HeldCount(a), "held", func() string { return HeldPhrase(a) }))
	}
	if ch, ok := pinnedRegressionCheck(b, a); ok {
		checks = append(checks, ch)
	}
	if ch, ok := thresholdRegressionCheck(beforeThresholds, afterThresholds); ok {
		checks = append(checks, ch)
	}
	for _, d := range deltas {
		ch := Check{Name: d.Label + " not worse than before", Pass: !d.Regressed}
		switch {
		case d.Skipped:
			ch.Detail = "not measured in both runs"
		default:
			ch.Detail = fmt.Sprintf("before %s, after %s, change %s; %s", d.BeforeText, d.AfterText, d.ChangeText, d.Rule)
		}
		checks = append(checks, ch)
	}
	return checks
}

// newProblemCheck: a problem after has that before had none of is a
// regression; where before had it too, its size is judged by the figures
// (stuck sessions, release p99) and their noise rules instead.
func newProblemCheck(name string, before, after int, word string, phrase func() string) Check {
	switch {
	case before > 0:
		return Check{Name: name, Pass: true, Detail: fmt.Sprintf("before %s %d too (after: %d); the figures below judge whether it got worse", word, before, after)}
	case after > 0:
		return Check{Name: name, Pass: false, Detail: "new in after: " + phrase()}
	}
	return Check{Name: name, Pass: true, Detail: "none " + word + " in either run"}
}

// pinnedRegressionCheck: a pool pinned (or exhausted) in after where it
// was not in before is a regression, unless the profile allows it.
func pinnedRegressionCheck(b, a *rundir.Summary) (Check, bool) {
	pinned := func(s *rundir.Summary) string {
		if c := PinnedOf(s); c != nil {
			return derive.PinnedPhrase(c) + " (database view)"
		}
		if s.Probe != nil && PoolPinned(s.Probe) {
			return fmt.Sprintf("the service's pool at its max (%.0f/%.0f) for %s with %.0f acquires waiting",
				s.Probe.AppPoolMaxAcquired, s.Probe.AppPoolMax, format.Seconds(s.Probe.AppPoolSaturatedSeconds), s.Probe.AppPoolAcquireWaits)
		}
		if p := s.Pool; p != nil && p.Exhausted && p.JudgedFrom != "database view" {
			return "pool exhausted: " + p.Reason
		}
		return ""
	}
	if (b.Pool == nil || len(b.Pool.Services) == 0) && (a.Pool == nil || len(a.Pool.Services) == 0) && (a.Probe == nil || !a.Probe.AppPoolSampled) && (a.Pool == nil || !a.Pool.Exhausted) {
		return Check{}, false
	}
	name := checkNoNewPinned
	pb, pa := pinned(b), pinned(a)
	switch {
	case pb != "":
		return Check{Name: name, Pass: true, Detail: "before was pinned too (" + pb + "); the pool figures below judge whether it got worse"}, true
	case pa != "" && PinnedAllowed(a):
		return Check{Name: name, Pass: true, Detail: "new in after, allowed by the profile (probe.allow_pinned): " + pa}, true
	case pa != "":
		return Check{Name: name, Pass: false, Detail: "new in after: " + pa}, true
	}
	return Check{Name: name, Pass: true, Detail: "pinned in neither run"}, true
}

// thresholdRegressionCheck: a threshold of the scenario that before met
// and after failed. A threshold both failed is no regression (it is the
// same scenario's, and before already missed it).
func thresholdRegressionCheck(before, after []rundir.Threshold) (Check, bool) {
	if len(after) == 0 {
		return Check{}, false
	}
	failedBefore := map[string]bool{}
	for _, t := range before {
		if !t.Pass {
			failedBefore[t.Metric+" "+t.Expression] = true
		}
	}
	var newly, both []string
	for _, t := range after {
		if t.Pass {
			continue
		}
		key := t.Metric + " " + t.Expression
		line := fmt.Sprintf("%s %s (observed %s)", t.Metric, t.Expression, t.ObservedString())
		if failedBefore[key] {
			both = append(both, line)
		} else {
			newly = append(newly, line)
		}
	}
	detail := fmt.Sprintf("%d thresholds; none newly failed", len(after))
	if len(newly) > 0 {
		detail = "newly failed in after: " + strings.Join(newly, "; ")
	}
	if len(both) > 0 {
		detail += "; failed in both runs: " + strings.Join(both, "; ")
	}
	return Check{Name: checkNoNewThreshold, Pass: len(newly) == 0, Detail: detail}, true
}

// Checks of a regression verdict, by name, and what their failing says in
// the headline.
const (
	checkNoNewLeak      = "after leaks no session where before leaked none"
	checkNoNewHeld      = "after holds no session where before held none"
	checkNoNewPinned    = "after pins no pool where before did not"
	checkNoNewThreshold = "after fails no threshold that before met"
)

var regressionWords = map[string]string{
	checkNoNewLeak:         "sessions leaked (none before)",
	checkNoNewHeld:         "sessions held (none before)",
	checkNoNewPinned:       "pool pinned (not before)",
	checkNoNewThreshold:    "thresholds failed that before met",
	"before run completed": "the baseline run did not complete",
	"after run completed":  "the run did not complete",
}

// Regressions say in a few words each what regressed, in the checks'
// order: "sessions held (none before)", "Connection release p99 12 ms →
// 1.50 s". Empty when nothing did.
func Regressions(checks []Check, deltas []Delta) []string {
	byCheck := map[string]Delta{}
	for _, d := range deltas {
		byCheck[d.Label+" not worse than before"] = d
	}
	var out []string
	for _, ch := range checks {
		if ch.Pass {
			continue
		}
		if d, ok := byCheck[ch.Name]; ok {
			out = append(out, d.Label+" "+d.BeforeText+" → "+d.AfterText)
		} else if w, ok := regressionWords[ch.Name]; ok {
			out = append(out, w)
		} else {
			out = append(out, ch.Name)
		}
	}
	return out
}

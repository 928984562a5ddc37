package reports

import (
	"fmt"
	"io"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/verdict"
)

func checkSuite(name, class string, checks []verdict.Check) junit.Suite {
	s := junit.Suite{Name: name}
	for _, ch := range checks {
		c := junit.Case{Name: ch.Name, Classname: class, SystemOut: ch.Detail}
		if !ch.Pass {
			c.Failure = &junit.Message{Message: ch.Detail, Type: "LeakCheckFailed", Text: ch.Detail}
		}
		s.Add(c)
	}
	return s
}

// thresholdSuite lists a run's thresholds. informational: a failed
// threshold is reported as skipped, not failed (the before run of a
// sign-off is expected to break them; the sign-off's checks decide).
func thresholdSuite(name, class string, ts []rundir.Threshold, informational bool) junit.Suite {
	s := junit.Suite{Name: name}
	for _, t := range ts {
		msg := fmt.Sprintf("%s %s: observed %s", t.Metric, t.Expression, t.ObservedString())
		c := junit.Case{Name: t.Metric + " " + t.Expression, Classname: class, SystemOut: msg}
		switch {
		case t.Pass:
		case informational:
			c.Skipped = &junit.Message{Message: "failed on the before (leaky) build, as a sign-off expects: " + msg}
		default:
			c.Failure = &junit.Message{Message: msg, Type: "ThresholdFailed", Text: msg}
		}
		s.Add(c)
	}
	return s
}

func writeJUnit(w io.Writer, name string, suites []junit.Suite) error {
	return junit.Write(w, name, suites...)
}

// WriteJUnit writes the run's leak checks and thresholds as JUnit XML.
func (r *Run) WriteJUnit(w io.Writer) error {
	class := "leakbench." + r.Summary.Name
	return writeJUnit(w, "leakbench "+r.Label(), []junit.Suite{
		checkSuite("leak checks: "+r.Label(), class, verdict.Checks(r.Summary)),
		thresholdSuite("thresholds: "+r.Label(), class, r.Thresholds, false),
	})
}

// WriteJUnit writes the sign-off's checks and both runs' thresholds as
// JUnit XML. Thresholds the before run fails are reported as skipped:
// the leaky build is expected to fail them.
//
// A regression verdict's thresholds are judged by its own check (a
// threshold before met and after failed), so its JUnit is its checks.
func (c *Comparison) WriteJUnit(w io.Writer) error {
	if c.Mode == verdict.ModeRegression {
		return writeJUnit(w, "leakbench regression check", []junit.Suite{checkSuite("regression check", "leakbench.regression", c.Checks)})
	}
	suites := []junit.Suite{checkSuite("sign-off", "leakbench.signoff", c.Checks)}
	if c.after != nil {
		suites = append(suites, thresholdSuite("thresholds: "+c.after.Label(), "leakbench.after", c.after.Thresholds, false))
	}
	if c.before != nil {
		suites = append(suites, thresholdSuite("thresholds: "+c.before.Label(), "leakbench.before", c.before.Thresholds, true))
	}
	return writeJUnit(w, "leakbench sign-off", suites)
}

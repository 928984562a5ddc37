package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// RunChecks are the leak checks of one run: each is a JUnit test case and
// a line of the HTML report. A leaky build fails them — that is what the
// before run of a sign-off must show.
func RunChecks(s *Summary) []Check {
	checks := []Check{{
		Name:   "run completed",
		Pass:   s.EndReason == EndCompleted,
		Detail: trimDetail(strings.TrimSuffix("ended: "+s.EndReason+" — "+s.Error, " — ")),
	}}
	p := s.Probe
	if p == nil && s.Environment.LoadOnly {
		return checks // nothing probed, by design: thresholds alone judge the run
	}
	if p == nil {
		return append(checks, Check{Name: "probe recorded samples", Detail: "no probe summary"})
	}
	checks = append(checks,
		Check{
			Name:   "no session leaked",
			Pass:   leakedCount(s) == 0,
			Detail: fmt.Sprintf("%s; longest hold %s", leakedPhrase(s), seconds(p.LongestHoldSeconds)),
		},
		Check{
			Name:   "no session held past the stuck threshold",
			Pass:   heldCount(s) == 0,
			Detail: fmt.Sprintf("%s; at most %d stuck at once", heldPhrase(s), p.MaxStuckIdleInTx),
		},
		Check{
			Name:   "no session killed by idle_in_transaction_session_timeout",
			Pass:   p.TimeoutTerminated == 0,
			Detail: timeoutDetail(p),
		})
	if ch, ok := unseenCheck(s); ok {
		checks = append(checks, ch)
	}
	if ch, ok := pinnedCheck(s, "service pool not pinned (database view)"); ok {
		checks = append(checks, ch)
	}
	if pool := s.Pool; pool != nil && (pool.PgBouncerSampled || pool.AppPoolSampled) {
		detail := "healthy"
		if pool.Exhausted {
			detail = pool.Reason
		}
		if pool.PgBouncerSampled {
			detail += fmt.Sprintf("; worst PgBouncer wait %s, up to %d clients queued", seconds(pool.WorstWaitSeconds), pool.PgBouncerMaxClWaiting)
		}
		checks = append(checks, Check{Name: "connection pool not exhausted", Pass: !pool.Exhausted, Detail: detail})
		if pool.AppPoolSampled {
			checks = append(checks, Check{
				Name:   "service closed every session",
				Pass:   pool.AppPoolUnclosedSessions == 0,
				Detail: fmt.Sprintf("%g sessions still open at the last scrape", pool.AppPoolUnclosedSessions),
			})
		}
	}
	return checks
}

func trimDetail(s string) string { return strings.Join(strings.Fields(s), " ") }

func checkSuite(name, class string, checks []Check) junit.Suite {
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
		checkSuite("leak checks: "+r.Label(), class, RunChecks(r.Summary)),
		thresholdSuite("thresholds: "+r.Label(), class, r.Thresholds, false),
	})
}

// WriteJUnit writes the sign-off's checks and both runs' thresholds as
// JUnit XML. Thresholds the before run fails are reported as skipped:
// the leaky build is expected to fail them.
func (c *Comparison) WriteJUnit(w io.Writer) error {
	suites := []junit.Suite{checkSuite("sign-off", "leakbench.signoff", c.Checks)}
	if c.after != nil {
		suites = append(suites, thresholdSuite("thresholds: "+c.after.Label(), "leakbench.after", c.after.Thresholds, false))
	}
	if c.before != nil {
		suites = append(suites, thresholdSuite("thresholds: "+c.before.Label(), "leakbench.before", c.before.Thresholds, true))
	}
	return writeJUnit(w, "leakbench sign-off", suites)
}

// timeoutDetail says how many sessions the server's timeout killed, or
// that it is off (then none can be, and the leak check is what counts).
func timeoutDetail(p *rundir.ProbeSummary) string {
	if p.IdleInTxTimeoutSeconds <= 0 {
		return fmt.Sprintf("%d sessions terminated; idle_in_transaction_session_timeout is off", p.TimeoutTerminated)
	}
	return fmt.Sprintf("%d sessions terminated at the %s timeout", p.TimeoutTerminated, seconds(p.IdleInTxTimeoutSeconds))
}

// Package verdict judges runs: the checks one run passes or fails (a
// leaked or held session, a pinned or exhausted pool, a probe that saw
// nothing), and the checks of a before/after sign-off under the question
// it asks (Mode: does the fix make the leak go away, or is after no worse
// than before). Every check and headline speaks one vocabulary (leaked,
// held, pinned), the same in the report, JUnit and compare.json:
//
//	checks := verdict.Fix(before, after)
//	pass := verdict.Passed(checks)
package verdict

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/derive"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Check is one verdict item; each becomes a JUnit test case later.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// Passed reports whether every check passed.
func Passed(checks []Check) bool {
	for _, ch := range checks {
		if !ch.Pass {
			return false
		}
	}
	return true
}

// One vocabulary for the verdict, the same in the headline, the checks,
// the forensics, JUnit and compare:
//   - leaked: a session the service never released — PostgreSQL's
//     idle_in_transaction_session_timeout killed it, it was terminated, or
//     it was still open when the run ended;
//   - held: a session the service released itself, but only after the
//     stuck threshold (idle in a transaction all that time);
//   - pool pinned: the service's connections at their maximum with none of
//     them working (rundir.ServiceConns.Pinned, the database's view).
// A held session is never called a leak, and a pinned pool is never
// called slowness.

// LeakedCount is how many sessions nobody released, from the forensics
// when there are, else from the probe's count of timeout kills.
func LeakedCount(s *rundir.Summary) int {
	if f := s.Forensics; f != nil {
		return f.Leaked
	}
	if s.Probe != nil {
		return s.Probe.TimeoutTerminated
	}
	return 0
}

// HeldCount is how many stuck sessions the service released itself, late.
func HeldCount(s *rundir.Summary) int {
	if f := s.Forensics; f != nil {
		return f.SlowReleases
	}
	if p := s.Probe; p != nil {
		return max(0, p.StuckEpisodes-p.TimeoutTerminated)
	}
	return 0
}

// PinnedOf is the pinned service of a run: the one pinned longest, nil when none was.
func PinnedOf(s *rundir.Summary) *rundir.ServiceConns {
	if s.Pool == nil {
		return nil
	}
	return derive.PinnedService(s.Pool.Services)
}

// PinnedAllowed: the profile relaxed the pinned check (probe.allow_pinned).
func PinnedAllowed(s *rundir.Summary) bool { return s.Pool != nil && s.Pool.PinnedAllowed }

// LeakedPhrase says how many sessions the service never released, and
// what ended them.
func LeakedPhrase(s *rundir.Summary) string {
	n := LeakedCount(s)
	reason := ""
	if f := s.Forensics; f != nil {
		reason = " (" + forensics.Reasons(f.LeakedByReason) + ")"
	} else if s.Probe != nil {
		reason = fmt.Sprintf(" (%d killed by idle_in_transaction_session_timeout)", s.Probe.TimeoutTerminated)
	}
	return fmt.Sprintf("%d %s never released by the service%s", n, sessionsWord(n), reason)
}

// HeldPhrase says how many sessions the service released late, the
// longest hold, and the request they were held across.
func HeldPhrase(s *rundir.Summary) string {
	n := HeldCount(s)
	threshold := 1.0
	longest := 0.0
	if f := s.Forensics; f != nil {
		threshold, longest = f.StuckAfterSeconds, f.SlowReleaseMaxSeconds
	} else if s.Probe != nil {
		threshold, longest = s.Probe.StuckAfterSeconds, s.Probe.LongestHoldSeconds
	}
	out := fmt.Sprintf("%d %s idle in transaction past the %s stuck threshold, released late by the service", n, sessionsWord(n), format.Seconds(threshold))
	if longest > 0 {
		out += " (the longest after " + format.Seconds(longest) + ")"
	}
	if cite := heldAcross(s); cite != "" {
		out += "; " + cite
	}
	return out
}

// heldAcross names the request the held sessions belonged to, when the
// join to it is exact (trace context): "held across requests: tools/call
// wait_for_run".
func heldAcross(s *rundir.Summary) string {
	f := s.Forensics
	if f == nil || f.Joined == 0 || len(f.ByRequest) == 0 {
		return ""
	}
	g := f.ByRequest[0]
	if g.Method == "" || strings.HasPrefix(g.Method, "(") {
		return ""
	}
	return "held across requests: " + forensics.RequestLabel(g.Method, g.Name)
}

// Problems are a run's facts, in the vocabulary above, for its headline:
// empty when none was seen.
func Problems(s *rundir.Summary) []string {
	var out []string
	if s.Probe != nil {
		if LeakedCount(s) > 0 {
			out = append(out, "connections leaked: "+LeakedPhrase(s))
		}
		if HeldCount(s) > 0 {
			out = append(out, "connections held: "+HeldPhrase(s))
		}
	}
	if c := PinnedOf(s); c != nil {
		word := "pool pinned: "
		if PinnedAllowed(s) {
			word = "pool pinned (allowed by the profile): "
		}
		out = append(out, word+derive.PinnedPhrase(c))
	}
	if p := s.Pool; p != nil && p.Exhausted && p.JudgedFrom != "database view" {
		out = append(out, "pool exhausted: "+p.Reason)
	}
	if p := s.Pool; p != nil && p.AppPoolUnclosedSessions > 0 {
		out = append(out, fmt.Sprintf("%g sessions never closed", p.AppPoolUnclosedSessions))
	}
	return out
}

// Failing reports whether Problems fail the run: all do, but a pinned
// pool the profile allows.
func Failing(s *rundir.Summary) bool {
	if s.Probe != nil && (LeakedCount(s) > 0 || HeldCount(s) > 0) {
		return true
	}
	if PinnedOf(s) != nil && !PinnedAllowed(s) {
		return true
	}
	p := s.Pool
	return p != nil && (p.Exhausted && p.JudgedFrom != "database view" || p.AppPoolUnclosedSessions > 0)
}

// pinnedCheck is the check on the database's view of the service's pool:
// it fails when a service was pinned, unless the profile allows it.
func pinnedCheck(s *rundir.Summary, name string) (Check, bool) {
	if s.Pool == nil || len(s.Pool.Services) == 0 {
		return Check{}, false
	}
	c := PinnedOf(s)
	if c == nil {
		top := s.Pool.Services[0]
		return Check{Name: name, Pass: true, Detail: fmt.Sprintf("never pinned; the most connections at once: %d (%s)", top.Max, top.Name)}, true
	}
	detail := derive.PinnedPhrase(c)
	if PinnedAllowed(s) {
		detail += "; allowed by the profile (probe.allow_pinned)"
	}
	return Check{Name: name, Pass: PinnedAllowed(s), Detail: detail}, true
}

func sessionsWord(n int) string {
	if n == 1 {
		return "session"
	}
	return "sessions"
}

// UnseenCheck fails a run whose probe never saw a client backend in the
// watched database: a probe DSN naming a database the service does not
// use would otherwise read as a healthy run.
func UnseenCheck(s *rundir.Summary) (Check, bool) {
	if s.Probe == nil || s.Pool == nil || s.Pool.MaxClientBackends > 0 || s.Probe.Samples == 0 {
		return Check{}, false
	}
	db := s.Environment.Database
	if db == "" {
		db = "the probe DSN's"
	} else {
		db = fmt.Sprintf("%q", db)
	}
	return Check{Name: "the probe saw the service's connections", Detail: fmt.Sprintf(
		"no client backend but the probe's own in database %s in %d samples: the service may use another database — give the probe DSN of the one it connects to", db, s.Probe.Samples)}, true
}

// NothingSeen is a clean run's words: the pool is called not pinned only
// when the database's view of it was sampled (older run directories, and
// samples without backends by application, cannot say).
func NothingSeen(s *rundir.Summary) string {
	if s.Pool != nil && len(s.Pool.Services) > 0 {
		return "nothing leaked or held, pool not pinned"
	}
	return "nothing leaked or held"
}

package verdict

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/derive"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/internal/format"
)

// Checks are the leak checks of one run: each is a JUnit test case and
// a line of the HTML report. A leaky build fails them — that is what the
// before run of a sign-off must show.
func Checks(s *rundir.Summary) []Check {
	checks := []Check{{
		Name:   "run completed",
		Pass:   s.EndReason == rundir.EndCompleted,
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
			Pass:   LeakedCount(s) == 0,
			Detail: fmt.Sprintf("%s; longest hold %s", LeakedPhrase(s), format.Seconds(p.LongestHoldSeconds)),
		},
		Check{
			Name:   "no session held past the stuck threshold",
			Pass:   HeldCount(s) == 0,
			Detail: fmt.Sprintf("%s; at most %d stuck at once", HeldPhrase(s), p.MaxStuckIdleInTx),
		},
		Check{
			Name:   "no session killed by idle_in_transaction_session_timeout",
			Pass:   p.TimeoutTerminated == 0,
			Detail: timeoutDetail(p),
		})
	if ch, ok := UnseenCheck(s); ok {
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
			detail += fmt.Sprintf("; worst PgBouncer wait %s, up to %d clients queued", format.Seconds(pool.WorstWaitSeconds), pool.PgBouncerMaxClWaiting)
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

// timeoutDetail says how many sessions the server's timeout killed, or
// that it is off (then none can be, and the leak check is what counts).
func timeoutDetail(p *rundir.ProbeSummary) string {
	if p.IdleInTxTimeoutSeconds <= 0 {
		return fmt.Sprintf("%d sessions terminated; idle_in_transaction_session_timeout is off", p.TimeoutTerminated)
	}
	return fmt.Sprintf("%d sessions terminated at the %s timeout", p.TimeoutTerminated, format.Seconds(p.IdleInTxTimeoutSeconds))
}

// completed is the checks that both runs of a sign-off completed: ended
// as they should, with a load result (and a probe summary, if probed).
func completed(before, after *rundir.Summary, probed bool) []Check {
	var checks []Check
	for _, r := range []struct {
		name string
		s    *rundir.Summary
	}{{"before", before}, {"after", after}} {
		checks = append(checks, Check{
			Name:   r.name + " run completed",
			Pass:   r.s.EndReason == rundir.EndCompleted && (!probed || r.s.Probe != nil) && r.s.Load != nil,
			Detail: trimDetail(fmt.Sprintf("ended: %s %s", r.s.EndReason, r.s.Error)),
		})
	}
	return checks
}

func trimDetail(s string) string { return strings.Join(strings.Fields(s), " ") }

// Fix is the checks of a sign-off that asks the fix question (ModeFix):
// the before run must show the leak (so the test can see one at all) and
// the after run must show none.
func Fix(before, after *rundir.Summary) []Check {
	checks := completed(before, after, true)
	if before.Probe != nil {
		culprit := "none"
		if len(before.Probe.Culprits) > 0 {
			culprit = format.Truncate(before.Probe.Culprits[0].Fingerprint, 120)
		}
		detail := fmt.Sprintf("%d stuck episodes, %d killed by the timeout, longest hold %s; top culprit: %s",
			before.Probe.StuckEpisodes, before.Probe.TimeoutTerminated, format.Seconds(before.Probe.LongestHoldSeconds), culprit)
		if cite := forensics.Citation(before.Forensics); cite != "" {
			detail += "; " + cite
		}
		if before.Probe.StuckEpisodes == 0 && PoolPinned(before.Probe) {
			detail = fmt.Sprintf("no session idle in transaction, but the service's pool sat at its max (%.0f/%.0f) for %s with %.0f acquires waiting: connections held while idle",
				before.Probe.AppPoolMaxAcquired, before.Probe.AppPoolMax, format.Seconds(before.Probe.AppPoolSaturatedSeconds), before.Probe.AppPoolAcquireWaits)
		}
		if before.Probe.StuckEpisodes == 0 && !PoolPinned(before.Probe) && PinnedOf(before) != nil {
			detail = "no session idle in transaction past the stuck threshold, but " + derive.PinnedPhrase(PinnedOf(before)) + " (database view)"
		}
		checks = append(checks, Check{
			Name:   "before reproduces the leak",
			Pass:   before.Probe.StuckEpisodes > 0 || PoolPinned(before.Probe) || PinnedOf(before) != nil,
			Detail: detail,
		})
		// A leak that holds connections without a transaction (held while
		// waiting) shows only in the service's pool: the fix must free it.
		if before.Probe.StuckEpisodes == 0 && PoolPinned(before.Probe) && after.Probe != nil {
			checks = append(checks, Check{
				Name: "after does not pin the service pool",
				Pass: after.Probe.AppPoolSaturatedSeconds < before.Probe.AppPoolSaturatedSeconds/2,
				Detail: fmt.Sprintf("pool at its max for %s (before: %s)",
					format.Seconds(after.Probe.AppPoolSaturatedSeconds), format.Seconds(before.Probe.AppPoolSaturatedSeconds)),
			})
		}
	}
	if after.Probe != nil {
		// A leak (nobody released the session) is gated strictly; a
		// session the service released late is judged by its own limit.
		checks = append(checks, leakCheck(after))
		if after.Forensics != nil {
			checks = append(checks, releaseCheck(after))
		}
		if ch, ok := pinnedCheck(after, "after does not pin the service pool (database view)"); ok {
			checks = append(checks, ch)
		}
	}
	return checks
}

// Thresholds is the check that the after run of a sign-off met its
// thresholds ts; false when it had none.
func Thresholds(ts []rundir.Threshold) (Check, bool) {
	if len(ts) == 0 {
		return Check{}, false
	}
	var failed []string
	for _, t := range ts {
		if !t.Pass {
			failed = append(failed, fmt.Sprintf("%s %s (observed %s)", t.Metric, t.Expression, t.ObservedString()))
		}
	}
	detail := fmt.Sprintf("%d thresholds, all met", len(ts))
	if len(failed) > 0 {
		detail = "failed: " + strings.Join(failed, "; ")
	}
	return Check{Name: "after meets its thresholds", Pass: len(failed) == 0, Detail: detail}, true
}

// PoolPinned: the service's own pool sat at its maximum for at least two
// seconds while acquires waited — connections held, whatever the server
// says about their transactions.
func PoolPinned(p *rundir.ProbeSummary) bool {
	return p.AppPoolSampled && p.AppPoolSaturatedSeconds >= 2 && p.AppPoolAcquireWaits > 0
}

// releaseP99 is the run's release latency, 99th percentile.
func releaseP99(s *rundir.Summary) float64 {
	if s.Probe == nil {
		return 0
	}
	return s.Probe.ReleaseP99Seconds
}

// leakCheck is the strict gate on the after run: no session that nobody
// released. Slow releases — stuck episodes the service ended itself — are
// judged by releaseCheck instead.
func leakCheck(after *rundir.Summary) Check {
	p, f := after.Probe, after.Forensics
	if f == nil {
		return Check{Name: "after has no stuck session",
			Pass:   p.StuckEpisodes == 0 && p.MaxStuckIdleInTx == 0,
			Detail: fmt.Sprintf("%d stuck episodes, at most %d stuck at once, longest hold %s", p.StuckEpisodes, p.MaxStuckIdleInTx, format.Seconds(p.LongestHoldSeconds))}
	}
	detail := fmt.Sprintf("%d leaked (idle in transaction ≥ %s and never released by the service: %s), %d killed by the timeout, longest hold %s",
		f.Leaked, format.Seconds(f.StuckAfterSeconds), forensics.Reasons(f.LeakedByReason), p.TimeoutTerminated, format.Seconds(p.LongestHoldSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d held — released by the service, late (judged below)", f.SlowReleases)
	}
	return Check{Name: "after leaks no session", Pass: f.Leaked == 0, Detail: detail}
}

// releaseCheck judges how late the after run's service released its
// sessions: the release p99 must stay below the profile's slow_release
// (default: the stuck threshold). It says when the run was saturated,
// which is what a late release under load usually is.
func releaseCheck(after *rundir.Summary) Check {
	f := after.Forensics
	p99 := releaseP99(after)
	detail := fmt.Sprintf("release p99 %s (limit %s%s)", format.Seconds(p99), format.Seconds(f.ReleaseLimitSeconds), releaseMargin(p99, f.ReleaseLimitSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d sessions held past the stuck threshold and released by the service itself, the longest after %s — held, not leaked",
			f.SlowReleases, format.Seconds(f.SlowReleaseMaxSeconds))
	}
	if f.Saturated {
		detail += "; the run was saturated: " + f.SaturatedReason
	}
	return Check{Name: "after releases promptly", Pass: p99 < f.ReleaseLimitSeconds, Detail: detail}
}

// releaseMargin says how far a passing release p99 stayed below its
// limit (": 1.7 s of margin, 7.3× the p99"), so that a reader sees
// whether the verdict could flip on a few hundred milliseconds of a
// loaded machine (#40); nothing when the p99 was not measured or failed.
func releaseMargin(p99, limit float64) string {
	if p99 <= 0 || p99 >= limit {
		return ""
	}
	return fmt.Sprintf(": %s of margin, %.1f× the p99", format.Seconds(limit-p99), limit/p99)
}

// Facts says in the verdict's words what one side of a comparison
// showed: "before: connections leaked, pool pinned", "after: none of it".
func Facts(s *rundir.Summary, side string) string {
	var words []string
	if s.Probe != nil && LeakedCount(s) > 0 {
		words = append(words, fmt.Sprintf("%d leaked", LeakedCount(s)))
	}
	if s.Probe != nil && HeldCount(s) > 0 {
		words = append(words, fmt.Sprintf("%d held", HeldCount(s)))
	}
	if c := PinnedOf(s); c != nil {
		words = append(words, fmt.Sprintf("pool pinned for %s", format.Seconds(c.PinnedSeconds)))
	} else if p := s.Pool; p != nil && p.Exhausted {
		words = append(words, "pool exhausted")
	}
	if len(words) == 0 {
		return side + ": " + NothingSeen(s)
	}
	return side + ": " + strings.Join(words, ", ")
}

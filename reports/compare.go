package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
)

// Check is one verdict item; each becomes a JUnit test case later.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// Comparison is a sign-off: before and after side by side, and the verdict.
type Comparison struct {
	SchemaVersion int      `json:"schema_version"`
	Before        *Summary `json:"before"`
	After         *Summary `json:"after"`
	BeforeDir     string   `json:"before_dir"`
	AfterDir      string   `json:"after_dir"`
	Pass          bool     `json:"pass"`
	Checks        []Check  `json:"checks"`
	// Capacity is what leakbench signoff --capacity measured of both
	// variants (AddCapacity); absent without --capacity.
	Capacity *SignoffCapacity `json:"capacity,omitempty"`

	// before and after are the runs read back from their directories, when
	// the comparison was made with CompareRuns: plots and thresholds.
	before, after *Run
	// plots are the plots written beside the comparison's report.md.
	plots []string
}

// CompareRuns judges a sign-off from two run directories read with
// LoadRun; unlike Compare it also checks the after run's thresholds and
// keeps the runs for the plots of the comparison report.
func CompareRuns(before, after *Run) *Comparison {
	c := Compare(before.Summary, after.Summary, before.Dir, after.Dir)
	c.before, c.after = before, after
	if len(after.Thresholds) > 0 {
		var failed []string
		for _, t := range after.Thresholds {
			if !t.Pass {
				failed = append(failed, fmt.Sprintf("%s %s (observed %s)", t.Metric, t.Expression, t.ObservedString()))
			}
		}
		detail := fmt.Sprintf("%d thresholds, all met", len(after.Thresholds))
		if len(failed) > 0 {
			detail = "failed: " + strings.Join(failed, "; ")
		}
		c.Checks = append(c.Checks, Check{Name: "after meets its thresholds", Pass: len(failed) == 0, Detail: detail})
		c.Pass = c.Pass && len(failed) == 0
	}
	return c
}

// Compare judges a sign-off: the before run must show the leak (so the test
// can see one at all) and the after run must show none.
func Compare(before, after *Summary, beforeDir, afterDir string) *Comparison {
	c := &Comparison{SchemaVersion: SchemaVersion, Before: before, After: after, BeforeDir: beforeDir, AfterDir: afterDir}
	for _, r := range []struct {
		name string
		s    *Summary
	}{{"before", before}, {"after", after}} {
		c.Checks = append(c.Checks, Check{
			Name:   r.name + " run completed",
			Pass:   r.s.EndReason == EndCompleted && r.s.Probe != nil && r.s.Load != nil,
			Detail: trimDetail(fmt.Sprintf("ended: %s %s", r.s.EndReason, r.s.Error)),
		})
	}
	if before.Probe != nil {
		culprit := "none"
		if len(before.Probe.Culprits) > 0 {
			culprit = truncate(before.Probe.Culprits[0].Fingerprint, 120)
		}
		detail := fmt.Sprintf("%d stuck episodes, %d killed by the timeout, longest hold %s; top culprit: %s",
			before.Probe.StuckEpisodes, before.Probe.TimeoutTerminated, seconds(before.Probe.LongestHoldSeconds), culprit)
		if cite := requestCitation(before); cite != "" {
			detail += "; " + cite
		}
		if before.Probe.StuckEpisodes == 0 && poolPinned(before.Probe) {
			detail = fmt.Sprintf("no session idle in transaction, but the service's pool sat at its max (%.0f/%.0f) for %s with %.0f acquires waiting: connections held while idle",
				before.Probe.AppPoolMaxAcquired, before.Probe.AppPoolMax, seconds(before.Probe.AppPoolSaturatedSeconds), before.Probe.AppPoolAcquireWaits)
		}
		if before.Probe.StuckEpisodes == 0 && !poolPinned(before.Probe) && pinnedOf(before) != nil {
			detail = "no session idle in transaction past the stuck threshold, but " + pinnedPhrase(pinnedOf(before)) + " (database view)"
		}
		c.Checks = append(c.Checks, Check{
			Name:   "before reproduces the leak",
			Pass:   before.Probe.StuckEpisodes > 0 || poolPinned(before.Probe) || pinnedOf(before) != nil,
			Detail: detail,
		})
		// A leak that holds connections without a transaction (held while
		// waiting) shows only in the service's pool: the fix must free it.
		if before.Probe.StuckEpisodes == 0 && poolPinned(before.Probe) && after.Probe != nil {
			c.Checks = append(c.Checks, Check{
				Name: "after does not pin the service pool",
				Pass: after.Probe.AppPoolSaturatedSeconds < before.Probe.AppPoolSaturatedSeconds/2,
				Detail: fmt.Sprintf("pool at its max for %s (before: %s)",
					seconds(after.Probe.AppPoolSaturatedSeconds), seconds(before.Probe.AppPoolSaturatedSeconds)),
			})
		}
	}
	if after.Probe != nil {
		// A leak (nobody released the session) is gated strictly; a
		// session the service released late is judged by its own limit.
		c.Checks = append(c.Checks, leakCheck(after))
		if after.Forensics != nil {
			c.Checks = append(c.Checks, releaseCheck(after))
		}
		if ch, ok := pinnedCheck(after, "after does not pin the service pool (database view)"); ok {
			c.Checks = append(c.Checks, ch)
		}
	}
	c.Pass = true
	for _, ch := range c.Checks {
		c.Pass = c.Pass && ch.Pass
	}
	return c
}

// poolPinned: the service's own pool sat at its maximum for at least two
// seconds while acquires waited — connections held, whatever the server
// says about their transactions.
func poolPinned(p *probes.Summary) bool {
	return p.AppPoolSampled && p.AppPoolSaturatedSeconds >= 2 && p.AppPoolAcquireWaits > 0
}

// Write writes compare.json and report.md into dir.
func (c *Comparison) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := writeJSON(filepath.Join(dir, rundir.CompareFile), c); err != nil {
		return err
	}
	return rundir.WriteFileFunc(filepath.Join(dir, rundir.ReportFile), c.WriteMarkdown)
}

// WriteMarkdown writes the sign-off: verdict, table, checks, culprits.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	verdict := "PASS — " + comparedFacts(c.Before, "before") + "; " + comparedFacts(c.After, "after")
	if !c.Pass {
		verdict = "FAIL — " + comparedFacts(c.Before, "before") + "; " + comparedFacts(c.After, "after") + ": see the checks below"
	}
	fmt.Fprintf(&b, "# leakbench sign-off: %s\n\n", verdict)
	for _, s := range []*Summary{c.Before, c.After} {
		if s.Incomplete {
			fmt.Fprintf(&b, "> **Incomplete run**: %s was killed before it finished; its column is rebuilt from the probe's files and covers only what was recorded.\n\n", s.Name)
		}
	}
	fmt.Fprintf(&b, "| | before (`%s`) | after (`%s`) |\n|---|---|---|\n", columnName(c.Before), columnName(c.After))
	for _, row := range rowsFor(c.Before, c.After) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.label, row.value(c.Before), row.value(c.After))
	}
	b.WriteString("\n## Checks\n\n")
	writeChecks(&b, c.Checks)
	writeCulprits(&b, "## Culprits in before (last query of stuck sessions)", c.Before, 3)
	writeCulprits(&b, "## Culprits in after (last query of stuck sessions)", c.After, 3)
	writeForensics(&b, "## Forensics of before: who left the stuck sessions", c.Before)
	writeForensics(&b, "## Forensics of after", c.After)
	if c.after != nil {
		writeThresholds(&b, "## Thresholds of after", c.after.Thresholds)
	}
	if c.Capacity != nil {
		c.Capacity.writeMarkdown(&b)
	}
	fmt.Fprintf(&b, "\nRun directories: `%s`, `%s`.\n", c.BeforeDir, c.AfterDir)
	if c.plots != nil {
		writeLinks(&b, c.plots, "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes the before/after table as plain text for a terminal.
func (c *Comparison) WriteTable(w io.Writer) error {
	rows := rowsFor(c.Before, c.After)
	width := 0
	for _, row := range rows {
		width = max(width, len([]rune(row.label)))
	}
	colw := 28
	for _, row := range rows {
		colw = max(colw, len([]rune(row.value(c.Before)))+2)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, "", colw, "before ("+columnName(c.Before)+")", "after ("+columnName(c.After)+")")
	for _, row := range rows {
		label := strings.ReplaceAll(row.label, "`", "")
		label = strings.ReplaceAll(label, "**", "")
		fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, label, colw, row.value(c.Before), row.value(c.After))
	}
	for _, ch := range c.Checks {
		mark := "PASS"
		if !ch.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s  %s: %s\n", mark, ch.Name, ch.Detail)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// releaseP99 is the run's release latency, 99th percentile.
func releaseP99(s *Summary) float64 {
	if s.Probe == nil {
		return 0
	}
	return s.Probe.ReleaseP99Seconds
}

// leakCheck is the strict gate on the after run: no session that nobody
// released. Slow releases — stuck episodes the service ended itself — are
// judged by releaseCheck instead.
func leakCheck(after *Summary) Check {
	p, f := after.Probe, after.Forensics
	if f == nil {
		return Check{Name: "after has no stuck session",
			Pass:   p.StuckEpisodes == 0 && p.MaxStuckIdleInTx == 0,
			Detail: fmt.Sprintf("%d stuck episodes, at most %d stuck at once, longest hold %s", p.StuckEpisodes, p.MaxStuckIdleInTx, seconds(p.LongestHoldSeconds))}
	}
	detail := fmt.Sprintf("%d leaked (idle in transaction ≥ %s and never released by the service: %s), %d killed by the timeout, longest hold %s",
		f.Leaked, seconds(f.StuckAfterSeconds), reasons(f.LeakedByReason), p.TimeoutTerminated, seconds(p.LongestHoldSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d held — released by the service, late (judged below)", f.SlowReleases)
	}
	return Check{Name: "after leaks no session", Pass: f.Leaked == 0, Detail: detail}
}

// releaseCheck judges how late the after run's service released its
// sessions: the release p99 must stay below the profile's slow_release
// (default: the stuck threshold). It says when the run was saturated,
// which is what a late release under load usually is.
func releaseCheck(after *Summary) Check {
	f := after.Forensics
	p99 := releaseP99(after)
	detail := fmt.Sprintf("release p99 %s (limit %s)", seconds(p99), seconds(f.ReleaseLimitSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d sessions held past the stuck threshold and released by the service itself, the longest after %s — held, not leaked",
			f.SlowReleases, seconds(f.SlowReleaseMaxSeconds))
	}
	if f.Saturated {
		detail += "; the run was saturated: " + f.SaturatedReason
	}
	return Check{Name: "after releases promptly", Pass: p99 < f.ReleaseLimitSeconds, Detail: detail}
}

// comparedFacts says in the verdict's words what one side of a comparison
// showed: "before: connections leaked, pool pinned", "after: none of it".
func comparedFacts(s *Summary, side string) string {
	var words []string
	if s.Probe != nil && leakedCount(s) > 0 {
		words = append(words, fmt.Sprintf("%d leaked", leakedCount(s)))
	}
	if s.Probe != nil && heldCount(s) > 0 {
		words = append(words, fmt.Sprintf("%d held", heldCount(s)))
	}
	if c := pinnedOf(s); c != nil {
		words = append(words, fmt.Sprintf("pool pinned for %s", seconds(c.PinnedSeconds)))
	} else if p := s.Pool; p != nil && p.Exhausted {
		words = append(words, "pool exhausted")
	}
	if len(words) == 0 {
		return side + ": " + nothingSeen(s)
	}
	return side + ": " + strings.Join(words, ", ")
}

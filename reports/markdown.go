package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/plots"
	"github.com/leakbench/leakbench/reports/table"
	"github.com/leakbench/leakbench/reports/verdict"
)

// WriteSummaryMarkdown writes one run's report from its summary alone: the
// table, culprits, errors and environment.
func WriteSummaryMarkdown(w io.Writer, s *rundir.Summary) error {
	var b strings.Builder
	writeRunMarkdown(&b, s, nil)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes one run's report, short enough for a pull-request
// comment: a banner when the run is incomplete, the table, the checks, the
// top culprits, thresholds, and links to the plots and report.html that
// RenderRun writes beside it.
func (r *Run) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	writeRunMarkdown(&b, r.Summary, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRunMarkdown(b *strings.Builder, s *rundir.Summary, r *Run) {
	fmt.Fprintf(b, "# leakbench run: %s", s.Name)
	if r != nil {
		fmt.Fprintf(b, " — %s", runVerdict(s))
	}
	b.WriteString("\n\n")
	if s.Incomplete {
		b.WriteString("> **Incomplete run**: it was killed before it finished, so no summary was written; what follows is rebuilt from the probe's files and covers only what was recorded.\n\n")
	}
	what := "Variant `" + s.Environment.Variant + "`"
	if s.Environment.Provider == "external" {
		// The user's own service: the reference gateway's variants do not apply.
		what = "Target " + orNA(s.Environment.Target)
	}
	if s.Profile != "" {
		what += ", profile `" + s.Profile + "`"
	}
	fmt.Fprintf(b, "%s, %s, ended: **%s**", what, s.Ended.Sub(s.Started).Round(100*time.Millisecond), s.EndReason)
	if s.Error != "" {
		fmt.Fprintf(b, " — %s", mdEscape(s.Error))
	}
	b.WriteString("\n\n| | value |\n|---|---|\n")
	for _, row := range table.For(s) {
		fmt.Fprintf(b, "| %s | %s |\n", row.Label, row.Value(s))
	}
	if r != nil {
		b.WriteString("\n## Checks\n\n")
		writeChecks(b, verdict.Checks(s))
	}
	writeCulprits(b, "## Culprits (last query of stuck sessions)", s, 3)
	writeSoak(b, s)   // soaksection.go
	writeSizing(b, s) // sizingsection.go
	forensics.WriteMarkdown(b, "## Forensics: who left the stuck sessions", s.Forensics)
	if r != nil {
		writeThresholds(b, "## Thresholds", r.Thresholds)
	}
	writeHTTPSteps(b, s) // httpsteps.go
	writeErrors(b, s)
	writeEnvironment(b, s)
	if r != nil {
		writeLinks(b, plots.Names(r.PlotRun()), "")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "\n_Note: %s._\n", mdEscape(n))
		}
	}
}

// runVerdict is one run's headline, in the verdict's vocabulary
// (package verdict): leaked, held, pool pinned — or none of them.
func runVerdict(s *rundir.Summary) string {
	bad := verdict.Problems(s)
	fails := verdict.Failing(s)
	if ch, ok := verdict.UnseenCheck(s); ok {
		bad = append(bad, "nothing to judge: "+ch.Detail)
		fails = true
	}
	if s.EndReason != rundir.EndCompleted {
		bad = append(bad, "the run did not complete ("+s.EndReason+")")
		fails = true
	}
	loadOnly := s.Probe == nil && s.Environment.LoadOnly
	if loadOnly && s.Load != nil {
		// Nothing was probed by design: the thresholds are the verdict.
		for _, t := range s.Load.Thresholds {
			if !t.Pass {
				bad = append(bad, fmt.Sprintf("threshold %s %s not met (observed %s)", t.Metric, t.Expression, t.ObservedString()))
				fails = true
			}
		}
	}
	switch {
	case fails:
		return "FAIL — " + strings.Join(bad, "; ")
	case len(bad) > 0:
		return "PASS — " + strings.Join(bad, "; ")
	case loadOnly:
		return "PASS — load only (no database probed): every threshold met"
	case s.Probe == nil:
		return "NO DATA — the probe recorded nothing"
	}
	return "PASS — " + verdict.NothingSeen(s)
}

func writeChecks(b *strings.Builder, checks []verdict.Check) {
	for _, ch := range checks {
		mark := "pass"
		if !ch.Pass {
			mark = "**FAIL**"
		}
		fmt.Fprintf(b, "- %s: %s — %s\n", mark, ch.Name, mdEscape(ch.Detail))
	}
}

func writeCulprits(b *strings.Builder, heading string, s *rundir.Summary, max int) {
	if s.Probe == nil || len(s.Probe.Culprits) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n\n| episodes | total hold | max hold | application | query |\n|---:|---:|---:|---|---|\n", heading)
	for i, c := range s.Probe.Culprits {
		if i == max {
			fmt.Fprintf(b, "\n%d more in the full report.\n", len(s.Probe.Culprits)-max)
			break
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | `%s` |\n", c.Episodes, seconds(c.TotalHoldSeconds), seconds(c.MaxHoldSeconds), mdEscape(c.ApplicationName), truncate(mdEscape(c.Fingerprint), 160))
	}
}

func writeThresholds(b *strings.Builder, heading string, ts []rundir.Threshold) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n\n", heading)
	for _, t := range ts {
		mark := "pass"
		if !t.Pass {
			mark = "**FAIL**"
		}
		abort := ""
		if t.AbortOnFail {
			abort = " (aborts the run)"
		}
		fmt.Fprintf(b, "- %s: `%s %s`%s — observed %s\n", mark, mdEscape(t.Metric), mdEscape(t.Expression), abort, mdEscape(t.ObservedString()))
	}
}

// errorKinds lists the kinds of error the load saw at least once, sorted.
func errorKinds(l *rundir.LoadResult) []string {
	if l == nil {
		return nil
	}
	var kinds []string
	for k, n := range l.ErrorsByKind {
		if n > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return kinds
}

func writeErrors(b *strings.Builder, s *rundir.Summary) {
	kinds := errorKinds(s.Load)
	if len(kinds) == 0 {
		return
	}
	b.WriteString("\n## Errors by kind\n\n")
	for _, k := range kinds {
		fmt.Fprintf(b, "- %s: %d%s\n", k, s.Load.ErrorsByKind[k], firstErrorText(s.Load, k))
	}
}

// firstErrorText says when the load first saw a failure of kind, and with
// how many users: where refusals or timeouts began ("" when not recorded).
func firstErrorText(l *rundir.LoadResult, kind string) string {
	f, ok := l.FirstErrors[kind]
	if !ok {
		return ""
	}
	if f.ActiveUsers == 0 {
		// Not known: a merge whose shards left no load.jsonl.
		return fmt.Sprintf(" (first at %.1f s of the load)", f.ElapsedSeconds)
	}
	return fmt.Sprintf(" (first at %.1f s of the load, %d users active)", f.ElapsedSeconds, f.ActiveUsers)
}

func writeEnvironment(b *strings.Builder, s *rundir.Summary) {
	e := s.Environment
	if e.LoadOnly {
		// Nothing was started or probed: only the target and the tool.
		fmt.Fprintf(b, "\n## Environment\n\nLoad-only run against %s, leakbench %s", orNA(e.Target), orNA(e.LeakbenchVersion))
		if e.LeakbenchCommit != "" {
			fmt.Fprintf(b, " (commit %s)", truncate(e.LeakbenchCommit, 12))
		}
		b.WriteString(".\n")
		return
	}
	fmt.Fprintf(b, "\n## Environment\n\n%s, provider %s, leakbench %s", environmentLine(s), orNA(e.Provider), orNA(e.LeakbenchVersion))
	if e.LeakbenchCommit != "" {
		fmt.Fprintf(b, " (commit %s)", truncate(e.LeakbenchCommit, 12))
	}
	b.WriteString(".\n")
}

// writeLinks links the plots and the HTML report by relative path; prefix
// is the path from the Markdown file to the report's directory.
func writeLinks(b *strings.Builder, plots []string, prefix string) {
	b.WriteString("\n")
	if len(plots) > 0 {
		b.WriteString("Plots:")
		for i, p := range plots {
			sep := " "
			if i > 0 {
				sep = " · "
			}
			fmt.Fprintf(b, "%s[%s](%s%s/%s.png)", sep, strings.ReplaceAll(p, "_", " "), prefix, rundir.PlotsDir, p)
		}
		b.WriteString(". ")
	}
	fmt.Fprintf(b, "Full report: [%s](%s%s), JUnit: [%s](%s%s).\n", rundir.HTMLFile, prefix, rundir.HTMLFile, rundir.JUnitFile, prefix, rundir.JUnitFile)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// environmentLine says what the run saw of the stack: PostgreSQL's
// settings, PgBouncer and the service's pool — each only as far as it was
// observed. A PgBouncer nobody gave the console of is "not probed", a
// service pool no metrics showed is "unknown", a timeout of 0 is "off".
func environmentLine(s *rundir.Summary) string {
	e := s.Environment
	var b strings.Builder
	fmt.Fprintf(&b, "PostgreSQL %s (idle_in_transaction_session_timeout %s", orNA(e.PostgresVersion), table.TimeoutSetting(e.IdleInTxTimeoutSeconds))
	if e.MaxConnections > 0 {
		fmt.Fprintf(&b, ", max_connections %d", e.MaxConnections)
	}
	b.WriteString("), ")
	if !table.PgBouncerSeen(s) {
		b.WriteString("PgBouncer not probed")
	} else {
		fmt.Fprintf(&b, "PgBouncer %s", orNA(strings.TrimPrefix(e.PgBouncerVersion, "PgBouncer ")))
		var set []string
		if e.PoolMode != "" {
			set = append(set, e.PoolMode+" pooling")
		}
		if e.PgBouncerPoolSize > 0 {
			set = append(set, fmt.Sprintf("pool %d", e.PgBouncerPoolSize))
		}
		if len(set) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(set, ", "))
		}
	}
	b.WriteString(", ")
	external := e.Provider == "external"
	switch {
	case e.GatewayPoolSize > 0:
		fmt.Fprintf(&b, "gateway pool %d", e.GatewayPoolSize)
	case s.Probe != nil && s.Probe.AppPoolSampled && s.Probe.AppPoolMax > 0:
		fmt.Fprintf(&b, "service pool %g (from its metrics)", s.Probe.AppPoolMax)
	case external:
		b.WriteString("service pool unknown (no pool metrics: --metrics-url)")
	default:
		b.WriteString("gateway pool unknown")
	}
	return b.String()
}

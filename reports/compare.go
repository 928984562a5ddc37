package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/sizing"
	"github.com/leakbench/leakbench/reports/table"
	"github.com/leakbench/leakbench/reports/verdict"
)

// Comparison is a sign-off: before and after side by side, and the verdict.
type Comparison struct {
	SchemaVersion int `json:"schema_version"`
	// Mode is the question the comparison asked (verdict.ModeFix or
	// verdict.ModeRegression) and Question that question in words; a
	// comparison written before modes existed reads as fix.
	Mode      verdict.Mode    `json:"mode"`
	Question  string          `json:"question"`
	Before    *rundir.Summary `json:"before"`
	After     *rundir.Summary `json:"after"`
	BeforeDir string          `json:"before_dir"`
	AfterDir  string          `json:"after_dir"`
	Pass      bool            `json:"pass"`
	Checks    []verdict.Check `json:"checks"`
	// Notes say what differs between the two runs without refusing the
	// comparison (another profile name; a scenario judged with force).
	Notes []string `json:"notes,omitempty"`
	// Deltas are the key figures, before against after, with their noise
	// rules: what a regression verdict judged (absent in fix mode).
	Deltas []verdict.Delta `json:"deltas,omitempty"`
	// Capacity is what leakbench signoff --capacity measured of both
	// variants (AddCapacity); absent without --capacity.
	Capacity *capreport.Signoff `json:"capacity,omitempty"`

	// before and after are the runs read back from their directories, when
	// the comparison was made with CompareRuns: plots and thresholds.
	before, after *Run
	// plots are the plots written beside the comparison's report.md.
	plots []string
}

// Compare judges a sign-off: the before run must show the leak (so the test
// can see one at all) and the after run must show none (verdict.Fix).
func Compare(before, after *rundir.Summary, beforeDir, afterDir string) *Comparison {
	c := &Comparison{SchemaVersion: rundir.SchemaVersion, Mode: verdict.ModeFix, Question: verdict.ModeFix.Question(), Before: before, After: after, BeforeDir: beforeDir, AfterDir: afterDir}
	c.Checks = verdict.Fix(before, after)
	c.Pass = verdict.Passed(c.Checks)
	return c
}

// CompareRuns judges a sign-off from two run directories read with
// LoadRun; unlike Compare it also checks the after run's thresholds and
// keeps the runs for the plots of the comparison report.
func CompareRuns(before, after *Run) *Comparison {
	c := Compare(before.Summary, after.Summary, before.Dir, after.Dir)
	c.before, c.after = before, after
	if ch, ok := verdict.Thresholds(after.Thresholds); ok {
		c.Checks = append(c.Checks, ch)
		c.Pass = c.Pass && ch.Pass
	}
	return c
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
	fmt.Fprintf(&b, "# leakbench %s\n\n", c.headline())
	fmt.Fprintf(&b, "Question asked — %s.\n\n", c.question())
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "> **Note**: %s.\n\n", n)
	}
	for _, s := range []*rundir.Summary{c.Before, c.After} {
		if s.Incomplete {
			fmt.Fprintf(&b, "> **Incomplete run**: %s was killed before it finished; its column is rebuilt from the probe's files and covers only what was recorded.\n\n", s.Name)
		}
	}
	fmt.Fprintf(&b, "| | before (`%s`) | after (`%s`) |\n|---|---|---|\n", columnName(c.Before), columnName(c.After))
	for _, row := range table.For(c.Before, c.After) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.Label, row.Value(c.Before), row.Value(c.After))
	}
	b.WriteString("\n## Checks\n\n")
	writeChecks(&b, c.Checks)
	verdict.WriteDeltas(&b, c.Deltas)
	writeCulprits(&b, "## Culprits in before (last query of stuck sessions)", c.Before, 3)
	writeCulprits(&b, "## Culprits in after (last query of stuck sessions)", c.After, 3)
	forensics.WriteMarkdown(&b, "## Forensics of before: who left the stuck sessions", c.Before.Forensics)
	forensics.WriteMarkdown(&b, "## Forensics of after", c.After.Forensics)
	if c.after != nil {
		writeThresholds(&b, "## Thresholds of after", c.after.Thresholds)
	}
	if line := holdLine(c); line != "" {
		fmt.Fprintf(&b, "\n## Sizing\n\n%s. Each run's report has its whole sizing.\n", format.UpperFirst(line))
	}
	if c.Capacity != nil {
		c.Capacity.WriteMarkdown(&b)
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
	rows := table.For(c.Before, c.After)
	width := 0
	for _, row := range rows {
		width = max(width, len([]rune(row.Label)))
	}
	colw := 28
	for _, row := range rows {
		colw = max(colw, len([]rune(row.Value(c.Before)))+2)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, "", colw, "before ("+columnName(c.Before)+")", "after ("+columnName(c.After)+")")
	for _, row := range rows {
		label := strings.ReplaceAll(row.Label, "`", "")
		label = strings.ReplaceAll(label, "**", "")
		fmt.Fprintf(&b, "%-*s  %-*s  %s\n", width, label, colw, row.Value(c.Before), row.Value(c.After))
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

// holdLine is the sign-off's Sizing line: how the hold moved
// (sizing.HoldChange); when only one side's hold was measured, which side
// lacks it, rather than no line at all; "" when neither was (runs without
// the database view).
func holdLine(c *Comparison) string {
	bn, an := columnName(c.Before), columnName(c.After)
	if line := sizing.HoldChange(bn, an, c.Before.Sizing, c.After.Sizing); line != "" {
		return line
	}
	measured := func(sz *rundir.Sizing) bool { return sz != nil && sz.HoldSeconds > 0 }
	switch b, a := measured(c.Before.Sizing), measured(c.After.Sizing); {
	case b && !a:
		return fmt.Sprintf("hold not compared: %s's was %s per request, %s's was not measured (its report's Sizing section says why)", bn, format.Secs(c.Before.Sizing.HoldSeconds), an)
	case a && !b:
		return fmt.Sprintf("hold not compared: %s's was not measured (its report's Sizing section says why), %s's was %s per request", bn, an, format.Secs(c.After.Sizing.HoldSeconds))
	}
	return ""
}

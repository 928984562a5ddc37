package history

import (
	"fmt"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/junit"
)

// Regressions are the deltas that regressed.
func (b *BaselineInfo) Regressions() []Delta {
	var out []Delta
	for _, d := range b.Deltas {
		if d.Regressed {
			out = append(out, d)
		}
	}
	return out
}

// Verdict is the comparison's verdict in one line.
func (b *BaselineInfo) Verdict() string {
	switch {
	case b.ID == "":
		return "no baseline: " + b.Note
	case b.Regressed:
		var names []string
		for _, d := range b.Regressions() {
			names = append(names, fmt.Sprintf("%s %s → %s (%s)", d.Label, d.BaselineText(), d.CurrentText(), d.ChangeText()))
		}
		return "REGRESSED against " + b.describe() + ": " + strings.Join(names, "; ")
	default:
		return "no regression against " + b.describe()
	}
}

func (b *BaselineInfo) describe() string {
	return fmt.Sprintf("baseline %s (release %s)", b.ID, b.Release)
}

// WriteMarkdown writes the comparison with the baseline: the verdict and
// one table row per figure.
func (b *BaselineInfo) WriteMarkdown(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString("## Against the baseline\n\n")
	if b.ID == "" {
		fmt.Fprintf(&sb, "No baseline (%s): %s\n", mdCell(b.Requested), mdCell(b.Note))
		_, err := io.WriteString(w, sb.String())
		return err
	}
	verdict := "no regression"
	if b.Regressed {
		verdict = "**REGRESSED**"
	}
	fmt.Fprintf(&sb, "Baseline `%s` (release `%s`): %s.\n\n", b.ID, mdCell(b.Release), verdict)
	if b.Note != "" {
		fmt.Fprintf(&sb, "> %s\n\n", mdCell(b.Note))
	}
	sb.WriteString("| figure | baseline | now | change | verdict | rule |\n|---|---:|---:|---:|---|---|\n")
	for _, d := range b.Deltas {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", d.Label, d.BaselineText(), d.CurrentText(), d.ChangeText(), deltaVerdict(d), d.Rule)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteTable writes the comparison as plain text for a terminal.
func (b *BaselineInfo) WriteTable(w io.Writer) error {
	var sb strings.Builder
	if b.ID == "" {
		fmt.Fprintf(&sb, "baseline (%s): none — %s\n", b.Requested, b.Note)
		_, err := io.WriteString(w, sb.String())
		return err
	}
	fmt.Fprintf(&sb, "against %s:\n", b.describe())
	width := len("figure")
	for _, d := range b.Deltas {
		width = max(width, len([]rune(d.Label)))
	}
	fmt.Fprintf(&sb, "%-*s  %12s  %12s  %-22s  %s\n", width, "figure", "baseline", "now", "change", "verdict")
	for _, d := range b.Deltas {
		fmt.Fprintf(&sb, "%-*s  %12s  %12s  %-22s  %s\n", width, d.Label, d.BaselineText(), d.CurrentText(), d.ChangeText(), deltaVerdict(d))
	}
	if b.Note != "" {
		fmt.Fprintf(&sb, "note: %s\n", b.Note)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func deltaVerdict(d Delta) string {
	switch {
	case d.Skipped:
		return "skipped"
	case d.Regressed:
		return "REGRESSED"
	}
	return "ok"
}

// WriteJUnit writes one test case per figure compared, in the JUnit XML
// that GitLab, Jenkins and GitHub's test reporters read: a regression is a
// failure, a figure one run did not record is skipped. No timestamps, so
// the output is deterministic.
func (b *BaselineInfo) WriteJUnit(w io.Writer) error {
	s := junit.Suite{Name: "leakbench baseline"}
	if b.ID == "" {
		s.Add(junit.Case{Name: "baseline found", Classname: "leakbench.baseline", Skipped: &junit.Message{Message: b.Note}})
	}
	for _, d := range b.Deltas {
		c := junit.Case{Name: d.Label + " did not regress", Classname: "leakbench.baseline",
			SystemOut: fmt.Sprintf("baseline %s (%s): %s, now %s, change %s; %s", b.ID, b.Release, d.BaselineText(), d.CurrentText(), d.ChangeText(), d.Rule)}
		switch {
		case d.Skipped:
			c.Skipped = &junit.Message{Message: "not measured in one of the runs"}
		case d.Regressed:
			c.Failure = &junit.Message{Message: fmt.Sprintf("%s: %s → %s (%s)", d.Label, d.BaselineText(), d.CurrentText(), d.ChangeText()), Text: d.Rule}
		}
		s.Add(c)
	}
	return junit.Write(w, "leakbench baseline", s)
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "`", "'")
	return strings.Join(strings.Fields(s), " ")
}

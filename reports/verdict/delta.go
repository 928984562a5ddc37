package verdict

import (
	"fmt"
	"slices"
	"strings"
)

// Delta is one key figure of a regression verdict, before against after,
// with the noise rule it was judged by (the rules are the history's, the
// ones --regression-rule sets: internal/app/history/FORMAT.md). compare.json
// lists them under deltas.
type Delta struct {
	// Figure is the figure's JSON name (release_p99_seconds, …).
	Figure string  `json:"figure"`
	Label  string  `json:"label"`
	Unit   string  `json:"unit"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Change is after − before, in Unit; Ratio after / before (0 when
	// before is 0).
	Change float64 `json:"change"`
	Ratio  float64 `json:"ratio"`
	// Regressed: after is worse than before beyond the rule.
	Regressed bool `json:"regressed"`
	// Skipped: one of the runs did not record this figure.
	Skipped bool `json:"skipped,omitempty"`
	// Rule is the noise rule in words.
	Rule string `json:"rule"`
	// BeforeText, AfterText and ChangeText are the values as the tables
	// show them ("120 ms", "+80 ms (×1.67)").
	BeforeText string `json:"before_text"`
	AfterText  string `json:"after_text"`
	ChangeText string `json:"change_text"`
}

// Moved reports whether the figure changed at all (what a step summary
// lists as "the figures that moved").
func (d Delta) Moved() bool { return !d.Skipped && d.Change != 0 }

// WriteDeltas writes the regression verdict's figures that moved as a
// table, the regressed ones first, and names those that did not move or
// were not measured in one line each.
func WriteDeltas(b *strings.Builder, deltas []Delta) {
	if len(deltas) == 0 {
		return
	}
	var moved []Delta
	var still, unmeasured []string
	for _, d := range deltas {
		switch {
		case d.Skipped:
			unmeasured = append(unmeasured, d.Label)
		case !d.Moved():
			still = append(still, d.Label+" ("+d.AfterText+")")
		default:
			moved = append(moved, d)
		}
	}
	slices.SortStableFunc(moved, func(x, y Delta) int {
		switch {
		case x.Regressed == y.Regressed:
			return 0
		case x.Regressed:
			return -1
		}
		return 1
	})
	b.WriteString("\n## Figures that moved, before against after\n\n")
	if len(moved) > 0 {
		b.WriteString("| figure | before | after | change | verdict | noise rule |\n|---|---|---|---|---|---|\n")
		for _, d := range moved {
			verdict := "within the rule"
			if d.Regressed {
				verdict = "**regressed**"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", d.Label, d.BeforeText, d.AfterText, d.ChangeText, verdict, d.Rule)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("None.\n\n")
	}
	if len(still) > 0 {
		fmt.Fprintf(b, "Unchanged: %s.\n", strings.Join(still, ", "))
	}
	if len(unmeasured) > 0 {
		fmt.Fprintf(b, "Not measured in both runs: %s.\n", strings.Join(unmeasured, ", "))
	}
}

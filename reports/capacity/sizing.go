package capacity

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/sizing"
)

// SizingChange is what a fix changed of the pool's sizing: each
// search's sizing in brief and one sentence of what moved, from measured
// figures only; when a side lacks one, the sentence says which.
// summary.json's capacity.sizing_change, compare.json's capacity.
type SizingChange struct {
	// Before and After are the names of the searches compared.
	Before string `json:"before"`
	After  string `json:"after"`
	// BeforeLine and AfterLine are each search's sizing in brief
	// (Search.SizingBrief).
	BeforeLine string `json:"before_line"`
	AfterLine  string `json:"after_line"`
	// Line is what the fix changed: "hold fell from 1.9 s to 110 ms per
	// request (…): the same pool of 10 now serves at most 91 req/s
	// instead of 5.3", or which figure a side lacks.
	Line string `json:"line"`
	// Measured is true when Line rests on both sides' measured holds.
	Measured bool `json:"measured"`
}

// CompareSizing compares the sizings of two searches, before then after;
// nil for any other number of searches.
func CompareSizing(ss []Search) *SizingChange {
	if len(ss) != 2 {
		return nil
	}
	b, a := &ss[0], &ss[1]
	c := &SizingChange{Before: b.Name, After: a.Name, BeforeLine: b.SizingBrief(), AfterLine: a.SizingBrief()}
	c.Line = HoldChange(b, a)
	c.Measured = c.Line != ""
	if !c.Measured {
		c.Line = "what the fix changed of the hold is not known: " + strings.Join(lacking(b, a, "hold h", "hold"), "; ")
		return c
	}
	if b.Sizing.CeilingReqPerS <= 0 || a.Sizing.CeilingReqPerS <= 0 {
		c.Line += "; the ceiling is not known: " + strings.Join(lacking(b, a, "pool size P", "pool size"), "; ")
	}
	return c
}

// lacking says, for each of the two searches that lacks the input named,
// why: "fixed's hold was not measured (pg_stat_database was not read)".
func lacking(b, a *Search, input, what string) []string {
	var out []string
	for _, s := range []*Search{b, a} {
		switch {
		case s.Sizing == nil:
			out = append(out, fmt.Sprintf("%s was not sized (no stage of it was probed)", s.Name))
		case !hasInput(s.Sizing, input):
			out = append(out, fmt.Sprintf("%s's %s was not measured (%s)", s.Name, what, cmp.Or(missingWhy(s.Sizing, input), "no reason recorded")))
		}
	}
	return out
}

// SizingBrief is the search's sizing in one line: "stage 3: hold 110 ms
// per request, pool of 10 → ceiling 91 req/s; at 40 req/s the pool needs
// 7", each figure the sizing lacks named as not measured.
func (s *Search) SizingBrief() string {
	sz := s.Sizing
	if sz == nil {
		return s.Name + ": not sized (no stage was probed)"
	}
	parts := []string{}
	if sz.HoldSeconds > 0 {
		parts = append(parts, fmt.Sprintf("hold %s per request", format.Secs(sz.HoldSeconds)))
	} else {
		parts = append(parts, "hold not measured ("+cmp.Or(missingWhy(sz, "hold h"), "no reason recorded")+")")
	}
	if p := sizing.PoolSize(sz); p > 0 {
		pool := "pool of " + format.Num(p)
		if sz.CeilingReqPerS > 0 {
			pool += fmt.Sprintf(" → ceiling %s req/s", format.Num(sz.CeilingReqPerS))
		}
		parts = append(parts, pool)
	} else {
		parts = append(parts, "pool size not measured ("+cmp.Or(missingWhy(sz, "pool size P"), "no reason recorded")+")")
	}
	line := fmt.Sprintf("%s (stage %d): %s", s.Name, s.SizingStage, strings.Join(parts, ", "))
	if sz.PoolNeeded > 0 {
		line += fmt.Sprintf("; at %s req/s the pool needs %d", format.Num(sz.TargetReqPerS), sz.PoolNeeded)
	}
	return line
}

// HoldChange says how the measured hold per request moved from before to
// after and what that makes of the pool's ceiling: "hold fell from 1.9 s
// to 110 ms per request: the same pool of 10 now serves at most 91 req/s
// instead of 5.3". "" when either search has no measured hold.
func HoldChange(before, after *Search) string {
	return sizing.HoldChange(before.Name, after.Name, before.Sizing, after.Sizing)
}

// hasInput says whether the sizing has a value for the input named.
func hasInput(sz *rundir.Sizing, name string) bool {
	for _, in := range sz.Inputs {
		if in.Name == name && in.Value != nil {
			return true
		}
	}
	return false
}

// missingWhy is why the sizing lacks the input named, as it recorded it;
// "" when it does not say.
func missingWhy(sz *rundir.Sizing, name string) string {
	for _, m := range sz.Missing {
		if why, ok := strings.CutPrefix(m, name+": "); ok {
			return why
		}
	}
	return ""
}

package plots

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestScaleMarks: the users panel marks changes made by hand, from
// summary.json or, for a run cut short, load.jsonl; a run without any
// has no mark.
func TestScaleMarks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	change := rundir.ScaleChange{Time: t0.Add(4500 * time.Millisecond), ElapsedSeconds: 4.5, Scenario: "s", From: 5, To: 20, By: "page"}
	render := func(inSummary, inLoad bool) string {
		var load []rundir.LoadPoint
		for s := range 10 {
			l := rundir.LoadPoint{Time: t0.Add(time.Duration(s+1) * time.Second), ElapsedSeconds: float64(s + 1), ActiveUsers: 5, Requests: 10, ReqPerSecond: 10}
			if s >= 4 {
				l.ActiveUsers = 20
			}
			if s == 4 && inLoad {
				l.Scale = []rundir.ScaleChange{change}
			}
			load = append(load, l)
		}
		sum := &rundir.Summary{Started: t0}
		if inSummary {
			sum.Load = &rundir.LoadResult{ScaleChanges: []rundir.ScaleChange{change}}
		}
		var buf bytes.Buffer
		if err := Write(&buf, Load, SVG, &Run{Summary: sum, Load: load}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	const legend = "users changed by hand"
	if !strings.Contains(render(true, true), legend) || !strings.Contains(render(false, true), legend) {
		t.Error("the users panel does not mark a change")
	}
	if strings.Contains(render(false, false), legend) {
		t.Error("a run without changes has the mark's legend")
	}
}

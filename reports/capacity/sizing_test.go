package capacity_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/internal/format"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/sizing"
)

// sizedSearch is a search whose knee's sizing is what package sizing
// makes of a synthetic run: a pool of pool (0: its size unknown) and
// busy backends on average over the load's 1000 requests in 50 s (0:
// pg_stat_database was not read).
func sizedSearch(t *testing.T, name string, pool int, busy float64) capacity.Search {
	t.Helper()
	s := synthetic.SizingSummary()
	s.Environment.GatewayPoolSize = pool
	if busy == 0 {
		s.Probe.Hold = nil
	} else {
		s.Probe.Hold.BusyBackendsMean = busy
	}
	sz, err := sizing.Size(s, synthetic.LoadPoints(30), sizing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return capacity.Search{Name: name, Outcome: capacity.Found, Capacity: 4, Unit: "users", Sizing: sz, SizingStage: 2}
}

// TestCompareCapacitySizing: with both holds measured, the sentence gives both
// and what the same pool now serves, each figure the sizings' own; when a
// side lacks the hold or the pool size, it says which side and why, and
// claims no figure it does not have.
func TestCompareCapacitySizing(t *testing.T) {
	before, after := sizedSearch(t, "leaky", 10, 20), sizedSearch(t, "fixed", 10, 2)
	c := capacity.CompareSizing([]capacity.Search{before, after})
	hb, ha := before.Sizing.HoldSeconds, after.Sizing.HoldSeconds
	want := fmt.Sprintf("hold fell from %s to %s per request (leaky → fixed, measured from the database): the same pool of 10 now serves at most %s req/s instead of %s",
		format.Secs(hb), format.Secs(ha), format.Num(10/ha), format.Num(10/hb))
	if !c.Measured || c.Line != want {
		t.Errorf("both measured:\n got %q (measured %v)\nwant %q", c.Line, c.Measured, want)
	}
	if !strings.HasPrefix(c.BeforeLine, "leaky (stage 2): hold "+format.Secs(hb)+" per request, pool of 10 → ceiling "+format.Num(10/hb)+" req/s; at 30 req/s the pool needs ") {
		t.Errorf("before's sizing in brief: %q", c.BeforeLine)
	}

	noHold := sizedSearch(t, "leaky", 10, 0)
	c = capacity.CompareSizing([]capacity.Search{noHold, after})
	if c.Measured || !strings.Contains(c.Line, "leaky's hold was not measured (pg_stat_database was not read)") || strings.Contains(c.Line, "fixed's") || strings.Contains(c.Line, "req/s") {
		t.Errorf("before without a hold: %q (measured %v)", c.Line, c.Measured)
	}
	if !strings.Contains(c.BeforeLine, "hold not measured (pg_stat_database was not read)") {
		t.Errorf("before's brief without a hold: %q", c.BeforeLine)
	}

	noPool := sizedSearch(t, "fixed", 0, 2)
	c = capacity.CompareSizing([]capacity.Search{before, noPool})
	if !c.Measured || !strings.Contains(c.Line, "; the ceiling is not known: fixed's pool size was not measured (the service exports no pool size") || strings.Contains(c.Line, "serves at most") {
		t.Errorf("after without a pool size: %q", c.Line)
	}

	unsized := capacity.Search{Name: "fixed", Outcome: capacity.BelowStart}
	c = capacity.CompareSizing([]capacity.Search{before, unsized})
	if c.Measured || !strings.HasSuffix(c.Line, "fixed was not sized (no stage of it was probed)") {
		t.Errorf("after not sized: %q", c.Line)
	}
	if capacity.CompareSizing([]capacity.Search{before}) != nil {
		t.Error("one search compared with nothing")
	}
}

// TestSignoffCapacitySizing: the sign-off's Capacity section shows both
// variants' sizings and what the fix changed, also when a search found no
// capacity (no capacity change to show).
func TestSignoffCapacitySizing(t *testing.T) {
	before, after := sizedSearch(t, "leaky", 10, 20), sizedSearch(t, "fixed", 10, 2)
	before.Outcome, before.Capacity = capacity.BelowStart, 0
	sc := capacity.NewSignoff(&capacity.Summary{Kind: capacity.Kind, Capacity: capacity.Capacity{Searches: []capacity.Search{before, after}}}, capacity.SignoffDir)
	var b strings.Builder
	sc.WriteMarkdown(&b)
	md := b.String()
	if sc.ChangeLine != "" {
		t.Errorf("a change line %q without both capacities", sc.ChangeLine)
	}
	for _, want := range []string{
		"- " + format.UpperFirst(capacity.HoldChange(&before, &after)) + "\n",
		"- Sizing of " + before.SizingBrief() + "\n",
		"- Sizing of " + after.SizingBrief() + "\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if sc.Variants[0].SizingLine != before.SizingBrief() || sc.HoldLine == "" {
		t.Errorf("compare.json capacity: %+v", sc)
	}
}

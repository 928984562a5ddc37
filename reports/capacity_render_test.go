package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func capacityFixture() *CapacitySummary {
	limitAt := 4.5
	stage := func(i, load int, held bool, p95 float64) CapacityStage {
		st := CapacityStage{Index: i, Load: load, Dir: "stage", Held: held, ReqPerSecond: float64(load) * 2, P50Ms: 100, P95Ms: p95, P99Ms: p95 * 1.2, Probed: true, ServiceConns: min(load, 10), AppPoolMax: 10, AppPoolPeak: float64(min(load, 10))}
		if !held {
			at := 4.5
			st.Trips = []CapacityTrip{{Limit: "pool exhausted", Detail: "service pool at its max (10/10) for 2.0 s", Resource: "the service's connection pool",
				AtSeconds: &at, AtBasis: "samples.jsonl: the service pool at its max"}}
		}
		return st
	}
	one := func(name string, good, bad int) CapacitySearch {
		return CapacitySearch{Name: name, Variant: name, Load: "users", Unit: "users", Outcome: CapacityFound, Capacity: good, FirstBad: bad,
			Resolution: "10%", Resolved: true, Limit: "pool exhausted", Resource: "the service's connection pool", LimitAtSeconds: &limitAt, Limits: []string{"pool not exhausted"},
			Stages: []CapacityStage{stage(1, good/2, true, 120), stage(2, bad*2, false, 900), stage(3, bad, false, 400), stage(4, good, true, 150)}}
	}
	c := &CapacitySummary{Capacity: Capacity{Searches: []CapacitySearch{one("commit-in-finally", 12, 13), one("fixed", 40, 44)}}}
	c.Capacity.Change = &CapacityChange{Before: "commit-in-finally", After: "fixed", From: 12, To: 40, Ratio: 3.3, Unit: "users",
		Line: "commit-in-finally → fixed raised capacity from 12 to 40 users, 3.3×"}
	return c
}

// TestWriteCapacity: a search's files are all written, the headline and
// the change are in the Markdown, a stage that broke a limit is a failed
// JUnit case.
func TestWriteCapacity(t *testing.T) {
	dir := t.TempDir()
	c := capacityFixture()
	if err := WriteCapacity(dir, c); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"raised capacity from 12 to 40 users, 3.3×", "fixed: capacity 40 users — at 44 users, pool exhausted tripped first at 4.5 s into the stage", "| 3 | 44 users | broke pool exhausted at 4.5 s into the stage"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	var junit bytes.Buffer
	if err := WriteCapacityJUnit(&junit, c); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(junit.String(), "<failure"); n != 4 {
		t.Errorf("junit: %d failures, want 4 (two stages broke a limit in each search):\n%s", n, junit.String())
	}
	for _, f := range []string{"summary.json", "report.html", "plots/capacity.png", "plots/capacity.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestTiedLimitsAreNotOrdered: limits that tripped at the same recorded
// time are named together, not one of them "first" — the stage did not
// record which came first.
func TestTiedLimitsAreNotOrdered(t *testing.T) {
	at := func(v float64) *float64 { return &v }
	trips := []CapacityTrip{{Limit: "pool exhausted", AtSeconds: at(3)}, {Limit: "p(95)<400", AtSeconds: at(3)}, {Limit: "errors", AtSeconds: at(5)}, {Limit: "checks"}}
	SortTrips(trips)
	tied := TiedWithFirst(trips)
	if strings.Join(tied, ",") != "p(95)<400" {
		t.Fatalf("tied with the first: %q; want only p(95)<400 (errors came later, checks has no time)", tied)
	}
	s := CapacitySearch{Name: "fixed", Unit: "users", Outcome: CapacityFound, Capacity: 22, FirstBad: 25,
		Limit: trips[0].Limit, LimitAtSeconds: trips[0].AtSeconds, LimitTiedWith: tied}
	h := s.Headline()
	if strings.Contains(h, "tripped first") || !strings.Contains(h, "pool exhausted and p(95)<400 tripped together at 3.0 s into the stage") {
		t.Errorf("headline %q: want both limits together at 3.0 s, neither called first", h)
	}
	s.LimitTiedWith = nil
	if h := s.Headline(); !strings.Contains(h, "pool exhausted tripped first at 3.0 s") {
		t.Errorf("headline without a tie %q: want pool exhausted tripped first at 3.0 s", h)
	}
	if got := TiedWithFirst([]CapacityTrip{{Limit: "a"}, {Limit: "b"}}); got != nil {
		t.Errorf("two trips with no time are not a tie at a time: %q", got)
	}
}

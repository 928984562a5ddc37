package capacity_test

import (
	"bytes"
	"github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteCapacity: a search's files are all written, the headline and
// the change are in the Markdown, a stage that broke a limit is a failed
// JUnit case.
func TestWriteCapacity(t *testing.T) {
	dir := t.TempDir()
	c := synthetic.Capacity()
	if err := capacity.Write(dir, c); err != nil {
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
	if err := capacity.WriteJUnit(&junit, c); err != nil {
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
	trips := []capacity.Trip{{Limit: "pool exhausted", AtSeconds: at(3)}, {Limit: "p(95)<400", AtSeconds: at(3)}, {Limit: "errors", AtSeconds: at(5)}, {Limit: "checks"}}
	capacity.SortTrips(trips)
	tied := capacity.TiedWithFirst(trips)
	if strings.Join(tied, ",") != "p(95)<400" {
		t.Fatalf("tied with the first: %q; want only p(95)<400 (errors came later, checks has no time)", tied)
	}
	s := capacity.Search{Name: "fixed", Unit: "users", Outcome: capacity.Found, Capacity: 22, FirstBad: 25,
		Limit: trips[0].Limit, LimitAtSeconds: trips[0].AtSeconds, LimitTiedWith: tied}
	h := s.Headline()
	if strings.Contains(h, "tripped first") || !strings.Contains(h, "pool exhausted and p(95)<400 tripped together at 3.0 s into the stage") {
		t.Errorf("headline %q: want both limits together at 3.0 s, neither called first", h)
	}
	s.LimitTiedWith = nil
	if h := s.Headline(); !strings.Contains(h, "pool exhausted tripped first at 3.0 s") {
		t.Errorf("headline without a tie %q: want pool exhausted tripped first at 3.0 s", h)
	}
	if got := capacity.TiedWithFirst([]capacity.Trip{{Limit: "a"}, {Limit: "b"}}); got != nil {
		t.Errorf("two trips with no time are not a tie at a time: %q", got)
	}
}

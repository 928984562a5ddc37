package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
)

// TestSignoffCapacitySection: signoff --capacity's searches land in the
// sign-off's own compare.json, report.md and report.html — the change
// line as printed, each variant's headline, the limit that tripped first
// with its time, a bound as "at least" — and stay there when the sign-off
// is rendered again from its directory (leakbench report).
func TestSignoffCapacitySection(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv(StepSummaryEnv, summary)
	out, cmp := renderFixtureSignoff(t)
	if cmp.Capacity != nil || strings.Contains(string(readFile(t, filepath.Join(out, rundir.ReportFile))), "## Capacity") {
		t.Fatal("a sign-off without --capacity has a capacity section")
	}
	c := synthetic.Capacity()
	// The after variant held up to the search's max: a bound.
	c.Capacity.Searches[1].Outcome = capreport.AboveMax
	c.Capacity.Change.Line = "commit-in-finally → fixed raised capacity from 12 to at least 40 users, 3.3×"
	if err := os.MkdirAll(filepath.Join(out, capreport.SignoffDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := capreport.Write(filepath.Join(out, capreport.SignoffDir), c); err != nil {
		t.Fatal(err)
	}
	if err := cmp.AddCapacity(out, c); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		var back Comparison
		if err := json.Unmarshal(readFile(t, filepath.Join(out, rundir.CompareFile)), &back); err != nil {
			t.Fatal(err)
		}
		bc := back.Capacity
		if bc == nil || bc.ChangeLine != c.Capacity.Change.Line || bc.Dir != capreport.SignoffDir || len(bc.Variants) != 2 {
			t.Fatalf("%s: compare.json capacity %+v", when, bc)
		}
		b, a := bc.Variants[0], bc.Variants[1]
		if b.Name != "commit-in-finally" || b.Capacity != 12 || b.AtLeast || b.FirstBad != 13 || b.Limit != "pool exhausted" ||
			b.LimitAtSeconds == nil || *b.LimitAtSeconds != 4.5 || b.Resource == "" || b.Headline != c.Capacity.Searches[0].Headline() {
			t.Errorf("%s: before %+v", when, b)
		}
		if a.Name != "fixed" || a.Capacity != 40 || !a.AtLeast || a.Outcome != capreport.AboveMax || !strings.Contains(a.Headline, "capacity is at least that") {
			t.Errorf("%s: after %+v", when, a)
		}
		md := string(readFile(t, filepath.Join(out, rundir.ReportFile)))
		html := string(readFile(t, filepath.Join(out, rundir.HTMLFile)))
		for _, want := range []string{"## Capacity", "**" + c.Capacity.Change.Line + "**",
			"- commit-in-finally: capacity 12 users — at 13 users, pool exhausted tripped first at 4.5 s into the stage (the service's connection pool)",
			"every stage held, up to the search's max of 40 users: capacity is at least that", "`capacity/report.md`"} {
			if !strings.Contains(md, want) {
				t.Errorf("%s: report.md lacks %q:\n%s", when, want, md)
			}
		}
		for _, want := range []string{"<h2>Capacity</h2>", "raised capacity from 12 to at least 40 users, 3.3×",
			"pool exhausted tripped first at 4.5 s into the stage", `<a href="capacity/report.html">`} {
			if !strings.Contains(html, want) {
				t.Errorf("%s: report.html lacks %q", when, want)
			}
		}
	}
	check("added")
	if s := string(readFile(t, summary)); strings.Count(s, "## Capacity") != 1 || !strings.Contains(s, c.Capacity.Change.Line) {
		t.Errorf("$GITHUB_STEP_SUMMARY has the section %d times:\n%s", strings.Count(s, "## Capacity"), s)
	}
	if _, err := RenderSignoff(out); err != nil {
		t.Fatal(err)
	}
	check("rendered again")
}

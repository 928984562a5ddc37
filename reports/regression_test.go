package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/verdict"
)

// loadSynthetic writes and reads a synthetic run: leaky, or healthy.
func loadSynthetic(t *testing.T, name string, seed uint64, leaky bool) *Run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := synthetic.WriteRun(dir, seed, leaky); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompareRegression(t *testing.T) {
	healthy1, healthy2 := loadSynthetic(t, "h1", 2, false), loadSynthetic(t, "h2", 3, false)
	leaky := loadSynthetic(t, "leaky", 1, true)
	regressed := []verdict.Delta{{Figure: "release_p99_seconds", Label: "Connection release p99", Regressed: true, BeforeText: "10 ms", AfterText: "900 ms", ChangeText: "+890 ms (×90.00)"}}
	for _, tt := range []struct {
		name          string
		before, after *Run
		deltas        []verdict.Delta
		pass          bool
		failed, words []string
	}{
		{name: "two healthy runs pass", before: healthy1, after: healthy2, pass: true},
		{name: "leaky then healthy passes", before: leaky, after: healthy1, pass: true},
		{name: "healthy then leaky fails naming the leak", before: healthy1, after: leaky,
			failed: []string{"after leaks no session where before leaked none", "after holds no session where before held none"},
			words:  []string{"sessions leaked (none before)", "sessions held (none before)", "pool pinned (not before)"}},
		{name: "a figure beyond its noise rule fails naming it", before: healthy1, after: healthy2, deltas: regressed,
			failed: []string{"Connection release p99 not worse than before"}, words: []string{"Connection release p99 10 ms → 900 ms"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := CompareRegression(tt.before, tt.after, tt.deltas)
			if c.Mode != verdict.ModeRegression || c.Question != verdict.ModeRegression.Question() {
				t.Errorf("mode %q, question %q", c.Mode, c.Question)
			}
			if c.Pass != tt.pass {
				t.Errorf("pass %v, want %v: %+v", c.Pass, tt.pass, c.Checks)
			}
			got := c.FailedChecks()
			for _, want := range tt.words {
				if !strings.Contains(strings.Join(c.Regressions(), "\n"), want) {
					t.Errorf("regressions %q lack %q", c.Regressions(), want)
				}
			}
			for _, want := range tt.failed {
				if !strings.Contains(strings.Join(got, "\n"), want) {
					t.Errorf("failed checks %q lack %q", got, want)
				}
			}
			var md strings.Builder
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(md.String(), "\n")
			wantHead := "# leakbench regression check: PASS"
			if !tt.pass {
				wantHead = "# leakbench regression check: FAIL — after regressed: " + strings.Join(c.Regressions(), "; ")
			}
			if !strings.HasPrefix(head, wantHead) {
				t.Errorf("headline %q, want %q…", head, wantHead)
			}
		})
	}
}

// TestCompareRunsModeFix: the fix question is today's sign-off — it fails
// two healthy runs (before shows no leak) — and its report says which
// question it asked; an unknown mode judges nothing.
func TestCompareRunsModeFix(t *testing.T) {
	healthy1, healthy2 := loadSynthetic(t, "h1", 2, false), loadSynthetic(t, "h2", 3, false)
	leaky := loadSynthetic(t, "leaky", 1, true)
	if c, err := CompareRunsMode(leaky, healthy1, verdict.ModeFix, nil); err != nil || !c.Pass || c.Mode != verdict.ModeFix {
		t.Errorf("fix leaky → healthy: %v, pass %v, mode %q", err, c != nil && c.Pass, c.Mode)
	}
	c, err := CompareRunsMode(healthy1, healthy2, verdict.ModeFix, nil)
	if err != nil || c.Pass {
		t.Fatalf("fix healthy → healthy: %v, pass %v", err, c != nil && c.Pass)
	}
	if got := c.FailedChecks(); len(got) != 1 || got[0] != "before reproduces the leak" {
		t.Errorf("failed checks %q", got)
	}
	if _, err := CompareRunsMode(healthy1, healthy2, "", nil); !errors.Is(err, verdict.ErrMode) {
		t.Errorf("no mode: %v, want verdict.ErrMode", err)
	}
	out := t.TempDir()
	if err := RenderComparison(out, c); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.ReportFile, rundir.HTMLFile} {
		raw, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "fix: before must show the leak, after must not") {
			t.Errorf("%s does not say which question it asked", f)
		}
	}
}

// TestRegressionJUnit: a regression verdict's junit.xml is its checks,
// failing exactly where the verdict does.
func TestRegressionJUnit(t *testing.T) {
	c := CompareRegression(loadSynthetic(t, "h", 2, false), loadSynthetic(t, "leaky", 1, true), nil)
	var b strings.Builder
	if err := c.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	x := b.String()
	want := fmt.Sprintf(`failures="%d"`, len(c.FailedChecks()))
	if !strings.Contains(x, `name="leakbench regression check"`) || !strings.Contains(x, want) || !strings.Contains(x, "after leaks no session where before leaked none") {
		t.Errorf("junit.xml lacks the regression suite or %s:\n%s", want, x)
	}
}

package reports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// firstTable returns the first Markdown table of text.
func firstTable(text string) string {
	var rows []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "|") {
			rows = append(rows, strings.TrimRight(line, "\n"))
		} else if len(rows) > 0 {
			break
		}
	}
	return strings.Join(rows, "\n")
}

// The README's before/after tables are the committed examples' own
// figures (make examples writes both): a stale README fails here.
func TestREADMETablesAreTheExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ci", "incident"} {
		re := regexp.MustCompile(`(?s)<!-- example:` + name + ` -->\n(.*?)\n<!-- /example:` + name + ` -->`)
		m := re.FindSubmatch(readme)
		if m == nil {
			t.Errorf("README.md has no <!-- example:%s --> table", name)
			continue
		}
		report, err := os.ReadFile(filepath.Join("examples", name+"-signoff", rundir.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		want := firstTable(string(report))
		if want == "" {
			t.Fatalf("examples/%s-signoff/%s has no table", name, rundir.ReportFile)
		}
		if got := string(m[1]); got != want {
			t.Errorf("README.md's %s table differs from examples/%s-signoff/%s (run make examples):\nREADME:\n%s\nexample:\n%s", name, name, rundir.ReportFile, got, want)
		}
	}
}

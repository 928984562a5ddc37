package scenariofile

import (
	"os"
	"slices"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/refdoc"
)

// TestReferenceListsEveryKey: every key the parser accepts, place by place
// (Keys, read from the parser's own tables), is in the scenario file's
// reference under that place's heading. The profile sections are held to
// it by internal/app/runner's test, which knows them.
func TestReferenceListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../../docs/reference/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Keys() {
		listed, ok := refdoc.Listed(doc, g.Where)
		if !ok {
			t.Errorf("docs/reference/scenario.md has no heading %q for the keys %v", g.Where, g.Keys)
			continue
		}
		for _, k := range g.Keys {
			if !slices.Contains(listed, k) {
				t.Errorf("docs/reference/scenario.md, %q: the parser accepts %q, the reference does not list it", g.Where, k)
			}
		}
		if g.Where == "Top level" {
			continue // lists the profile sections too
		}
		for _, k := range listed {
			if !slices.Contains(g.Keys, k) {
				t.Errorf("docs/reference/scenario.md, %q: lists %q, which the parser does not accept there", g.Where, k)
			}
		}
	}
}

// TestKeysSeeTheTables: Keys follows the tables — a key added to one is
// in Keys (and so must be in the reference).
func TestKeysSeeTheTables(t *testing.T) {
	saved := dataKeys
	defer func() { dataKeys = saved }()
	dataKeys = append(slices.Clone(dataKeys), "brandNew")
	for _, g := range Keys() {
		if g.Where == "Data" && slices.Contains(g.Keys, "brandNew") {
			return
		}
	}
	t.Error("a key added to dataKeys is not in Keys()")
}

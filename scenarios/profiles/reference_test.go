package profiles

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/refdoc"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestScenarioReferenceListsProfileSections: the profile's own sections
// (stack, probe, signoff, faults, recovery, capacity, soak — the very
// sections Parse decodes) and every key of each are in the
// scenario file's reference, and the reference's top level lists nothing
// the parser refuses.
func TestScenarioReferenceListsProfileSections(t *testing.T) {
	doc, err := os.ReadFile("../../docs/reference/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range scenariofile.Keys(profileSections(&Profile{}, &signoffSection{}, &recoverySection{})...) {
		if g.Where != "Top level" && !strings.HasPrefix(g.Where, "Section ") {
			continue // scenariofile's own test holds those
		}
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
		for _, k := range listed {
			if !slices.Contains(g.Keys, k) {
				t.Errorf("docs/reference/scenario.md, %q: lists %q, which the parser does not accept there", g.Where, k)
			}
		}
	}
}

// TestShippedFilesSpellKeysOnce: the profiles and examples leakbench
// ships are written in the one spelling of every key (no deprecation
// warning), so that a reader copies the right one.
func TestShippedFilesSpellKeysOnce(t *testing.T) {
	files := []string{"../../scenarios/examples/annotated.yaml"}
	for _, n := range Names() {
		files = append(files, "profile "+n)
	}
	for _, f := range files {
		var p Profile
		var err error
		if name, ok := strings.CutPrefix(f, "profile "); ok {
			p, err = Lookup(name)
		} else {
			p, err = Load(f)
		}
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, w := range p.Plan.Warnings() {
			if strings.Contains(w, "deprecated spelling") {
				t.Errorf("%s: %s", f, w)
			}
		}
	}
}

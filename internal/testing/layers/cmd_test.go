package layers_test

import (
	"sort"
	"strings"
	"testing"
)

// TestCommandLinksNoTestSupport: cmd/leakbench may import the libraries
// (scenarios, probes, reports, fixtures, …) directly, as well as the
// application layer (internal/app/...): an alias facade that only gave a
// type a second name for the command's sake cost every reader a lookup.
// What it must not link is the tests' own support (internal/testing/...),
// which exists for tests and is not part of the product.
func TestCommandLinksNoTestSupport(t *testing.T) {
	l, ok := list(t, "./cmd/leakbench")["cmd/leakbench"]
	if !ok {
		t.Fatal("go list said nothing of cmd/leakbench")
	}
	var bad []string
	for _, d := range l.Deps {
		if rel, ours := strings.CutPrefix(d, module+"/"); ours && strings.HasPrefix(rel, "internal/testing/") {
			bad = append(bad, rel)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("cmd/leakbench links %s: internal/testing/... is the tests' support, not the product's", b)
	}
}

// libraryPrefixes are the library layer: formats, the engine, the probes
// and the reports. The application layer (internal/app/...) composes
// them; never the other way round.
var libraryPrefixes = []string{"internal/lib/", "scenarios/", "probes", "reports"}

// TestLibraryTestsStayInTheirLayer: a library's tests, too, import no
// package of the application layer (internal/app/...): a test that needs
// the runner to exercise a probe tests the runner, and belongs beside it.
func TestLibraryTestsStayInTheirLayer(t *testing.T) {
	all := listTests(t, "./internal/lib/...", "./scenarios/...", "./probes/...", "./reports/...")
	var bad []string
	for pkg, imports := range all {
		if !isLibrary(pkg) {
			continue
		}
		for _, imp := range imports {
			if rel, ours := strings.CutPrefix(imp, module+"/"); ours && strings.HasPrefix(rel, "internal/app/") {
				bad = append(bad, pkg+"'s tests import "+rel)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// isLibrary: the package is one of libraryPrefixes'.
func isLibrary(pkg string) bool {
	for _, p := range libraryPrefixes {
		if pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

package layers_test

import (
	"sort"
	"strings"
	"testing"
)

// TestCommandSitsOnTheApplication: cmd/leakbench imports, of the module's
// own packages, only the application layer (internal/app/...) and the
// leaves (internal/lib/...); the libraries are reached through the
// application, the way k6's cmd reaches lib only through its own layer.
func TestCommandSitsOnTheApplication(t *testing.T) {
	l, ok := list(t, "./cmd/leakbench")["cmd/leakbench"]
	if !ok {
		t.Fatal("go list said nothing of cmd/leakbench")
	}
	var bad []string
	for _, imp := range l.Imports {
		rel, ours := strings.CutPrefix(imp, module+"/")
		if !ours {
			continue
		}
		if !strings.HasPrefix(rel, "internal/app/") && !strings.HasPrefix(rel, "internal/lib/") {
			bad = append(bad, rel)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("cmd/leakbench imports %s: only internal/app/... and internal/lib/... are allowed", b)
	}
}

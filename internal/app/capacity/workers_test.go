package capacity

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/workers"
)

// TestWorkersRefusedOnLocal: a search of the reference gateway's variants
// on the local stack (its gateway inside this process) refuses workers
// with the reason, before anything is written.
func TestWorkersRefusedOnLocal(t *testing.T) {
	p, sp := resolveProfile(t, targetPlan, "target.yaml")
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), Options{Profile: p, Spec: sp, Variants: []string{"fixed"}, Out: out, Version: "test", Workers: workers.Config{Count: 2}})
	if !errors.Is(err, workers.ErrBadInput) || !strings.Contains(err.Error(), "--env local runs the reference gateway inside this leakbench process") {
		t.Fatalf("error %v; want the local gateway named as the reason", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the output directory was made: %v", serr)
	}
	if w := (Options{Workers: workers.Config{Count: 4}}).stageWorkers(); !w.UpToUsers || w.Count != 4 {
		t.Errorf("a stage's workers %+v: want up to its users", w)
	}
}

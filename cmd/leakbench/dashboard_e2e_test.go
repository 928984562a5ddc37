//go:build e2e

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ESignoffCapacityDashboard: signoff --capacity --dashboard on local
// stacks, in-process: the capacity searches that follow the sign-off are
// on the sign-off's page — its panel has both sides and both searches
// with their stages judged, and each stage's run is a part of the page
// that did not become a side.
func TestE2ESignoffCapacityDashboard(t *testing.T) {
	t.Parallel() // waits on its stacks and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a sign-off and two capacity searches on local stacks (about a minute)")
	}
	requireLocalStack(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(prof, []byte(signoffCapacityProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := watchCommand(t, cmdSignoff, "--scenario", prof, "--env", "local", "--capacity", "--out", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatalf("signoff --capacity --dashboard: %v", err)
	}
	v := w.last(t).View
	if v.Command != "signoff" || len(v.Sides) != 2 || v.Sides[0].Name != "before" || v.Sides[1].Name != "after" {
		t.Errorf("panel sides %+v: want before and after, and no stage among them", v.Sides)
	}
	if len(v.Searches) != 2 || v.Searches[0].Name != "commit-in-finally" || v.Searches[1].Name != "fixed" {
		t.Fatalf("panel searches %+v: want commit-in-finally then fixed", v.Searches)
	}
	stages := map[string]bool{}
	for _, p := range w.points {
		if strings.Contains(p.Part, " stage ") {
			stages[p.Part] = true
		}
	}
	for _, s := range v.Searches {
		if len(s.Stages) == 0 || s.Outcome == "" {
			t.Errorf("search %s: %d stages, outcome %q: want its stages judged and its outcome", s.Name, len(s.Stages), s.Outcome)
		}
		for _, st := range s.Stages {
			if part := s.Name + " stage " + itoa(st.Index); !stages[part] {
				t.Errorf("stage %s played no point on the page (parts seen: %v)", part, stages)
			}
		}
	}
}

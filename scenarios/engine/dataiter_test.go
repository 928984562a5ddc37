package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestDataPerIteration: a data file drawn per iteration gives each
// iteration a fresh row. Sequential: user k's iteration i takes row
// k + i×users, so 2 users × 3 iterations send each of 6 rows exactly
// once (per user, the default, they would send 2 rows 3 times each).
// Random: 20 iterations of one user draw more than one row, where per
// user it keeps one for its life.
func TestDataPerIteration(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	mcptest.WriteUsersCSV(t, dir, 6)
	tests := []struct {
		name, data string
		vus, iters int
		check      func(t *testing.T, sent map[string]int)
	}{
		{"sequential per iteration", "{ file: users.csv, per: iteration }", 2, 3, func(t *testing.T, sent map[string]int) {
			for i := range 6 {
				if got := sent[fmt.Sprintf("u%d@x.org", i)]; got != 1 {
					t.Errorf("row %d sent %d times, want once: %v", i, got, sent)
				}
			}
		}},
		{"sequential per user", "{ file: users.csv }", 2, 3, func(t *testing.T, sent map[string]int) {
			if sent["u0@x.org"] != 3 || sent["u1@x.org"] != 3 || len(sent) != 2 {
				t.Errorf("sent %v; want rows 0 and 1, 3 times each", sent)
			}
		}},
		{"random per iteration", "{ file: users.csv, mode: random, per: iteration }", 1, 20, func(t *testing.T, sent map[string]int) {
			if len(sent) < 2 {
				t.Errorf("one user's 20 iterations drew %v; want more than one row", sent)
			}
		}},
		{"random per user", "{ file: users.csv, mode: random }", 1, 20, func(t *testing.T, sent map[string]int) {
			if len(sent) != 1 {
				t.Errorf("one user drew %v; want one row for its life", sent)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "s.yaml")
			yaml := fmt.Sprintf("seed: 7\ndata: %s\nscenarios:\n  s:\n    executor: per-vu-iterations\n    vus: %d\n    iterations: %d\n"+
				"    flow:\n      - tools/call: { name: echo, arguments: { text: \"{{data.email}}\" } }\n", tt.data, tt.vus, tt.iters)
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := scenariofile.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			srv := mcptest.Start(t, mcptest.Options{SDK: true})
			res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failures != 0 {
				t.Fatalf("%d requests failed: %q", res.Failures, res.ErrorSamples)
			}
			tt.check(t, srv.CallTexts())
		})
	}
}

package engine

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestSegmentsSendTheWholePlansRows: a plan played as two segments (the
// shards of --shard and the processes of --workers) sends the same data
// rows, as many times each, as the whole plan in one process — users
// read the rows of their place in the whole scenario, not in their
// segment, so unique rows stay unique and a file drawn per iteration is
// walked once. Before, each segment counted its users from 0 and sent
// the first rows twice.
func TestSegmentsSendTheWholePlansRows(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	mcptest.WriteUsersCSV(t, dir, 6)
	for _, tt := range []struct {
		name, data string
		vus, iters int
	}{
		{"unique per user", "{ file: users.csv, mode: unique }", 6, 2},
		{"sequential per iteration", "{ file: users.csv, per: iteration }", 2, 3},
		{"random per user", "{ file: users.csv, mode: random }", 4, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "s.yaml")
			yaml := fmt.Sprintf("seed: 7\ndata: %s\nscenarios:\n  s:\n    executor: per-vu-iterations\n    vus: %d\n    iterations: %d\n"+
				"    flow:\n      - tools/call: { name: echo, arguments: { text: \"{{data.email}}\" } }\n", tt.data, tt.vus, tt.iters)
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			play := func(segs ...plan.Segment) map[string]int {
				t.Helper()
				srv := mcptest.Start(t, mcptest.Options{SDK: true})
				for _, seg := range segs {
					p, err := scenariofile.Load(file)
					if err != nil {
						t.Fatal(err)
					}
					res, err := RunPlan(context.Background(), p, RunOptions{Target: srv.URL, Segment: seg})
					if err != nil {
						t.Fatal(err)
					}
					if res.Failures != 0 {
						t.Fatalf("segment %s: %d requests failed: %q", seg, res.Failures, res.ErrorSamples)
					}
				}
				return srv.CallTexts()
			}
			whole := play(plan.Segment{})
			split := play(plan.Segment{Index: 0, Count: 2}, plan.Segment{Index: 1, Count: 2})
			if !maps.Equal(whole, split) {
				t.Errorf("rows sent by two segments %v, by the whole plan %v; want the same", split, whole)
			}
			if n := len(whole); n < 2 {
				t.Errorf("the whole plan sent %d distinct rows: %v", n, whole)
			}
		})
	}
}

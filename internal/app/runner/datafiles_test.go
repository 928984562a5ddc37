package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestWithShardData: the plan's data file and a scenario's are read here
// and moved to where the shard containers find them, modes kept; the
// plan given is unchanged; a plan without data files comes back as it is;
// a file that cannot be read is an error naming it, before any container.
func TestWithShardData(t *testing.T) {
	dir := t.TempDir()
	csvPath := mcptest.WriteUsersCSV(t, dir, 3)
	rows := `[{"team": "a"}, {"team": "b"}]`
	if err := os.WriteFile(filepath.Join(dir, "teams.json"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := "data: {file: users.csv, mode: unique}\nscenarios:\n" +
		"  s: {executor: per-vu-iterations, vus: 2, iterations: 1, flow: [ping]}\n" +
		"  t: {executor: per-vu-iterations, vus: 2, iterations: 1, data: {file: teams.json, per: iteration}, flow: [ping]}\n"
	p, err := scenariofile.Parse([]byte(scen), filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	moved, files, err := withShardData(p)
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(csvPath)
	if moved.Data.File != "/shard/data/0-users.csv" || moved.Data.Mode != "unique" || string(files[moved.Data.File]) != string(csv) {
		t.Errorf("the plan's data: %+v, %d bytes sent; want /shard/data/0-users.csv, unique, the file's %d bytes", moved.Data, len(files[moved.Data.File]), len(csv))
	}
	if d := moved.Scenarios[1].Data; d == nil || d.File != "/shard/data/1-teams.json" || d.Per != "iteration" || string(files[d.File]) != rows {
		t.Errorf("scenario t's data: %+v; want /shard/data/1-teams.json, per iteration, its rows", d)
	}
	if len(files) != 2 || moved.Scenarios[0].Data != nil {
		t.Errorf("%d files, scenario s's data %+v; want 2 files, and s reading the plan's", len(files), moved.Scenarios[0].Data)
	}
	if p.Data.File != "users.csv" || p.Scenarios[1].Data.File != "teams.json" {
		t.Errorf("the plan given was changed: %s, %s", p.Data.File, p.Scenarios[1].Data.File)
	}

	plain, err := scenariofile.Parse([]byte("scenarios:\n  s: {executor: per-vu-iterations, vus: 1, iterations: 1, flow: [ping]}\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if same, files, err := withShardData(plain); same != plain || len(files) != 0 || err != nil {
		t.Errorf("a plan without data: %p (given %p), %d files, %v; want it as it is", same, plain, len(files), err)
	}

	if err := os.Remove(csvPath); err != nil {
		t.Fatal(err)
	}
	if _, _, err := withShardData(p); err == nil || !strings.Contains(err.Error(), "read the data file users.csv") {
		t.Errorf("a missing data file: %v; want an error naming users.csv", err)
	}
}

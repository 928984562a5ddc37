package runner

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// Data files of a plan played elsewhere than in this process: a worker
// or a shard container has no scenario file for the plan's relative
// paths to be relative to. In both, a user's row follows its place in the
// whole plan (the engine's segments), so the rows handed out are those one
// process would hand out.

// withDataPaths is p with its data files' paths made absolute: a worker
// reads them itself, on this machine. p itself is unchanged.
func withDataPaths(p *plan.Plan) (*plan.Plan, error) {
	return moveData(p, (*plan.DataSource).Resolved)
}

// shardDataDir is where a shard container finds the plan's data files.
const shardDataDir = shardInput + "/data"

// withShardData is p with its data files moved to where the shard
// containers find them (shardDataDir/N-NAME), and those files' contents,
// read here: a container sees none of this machine's files. p itself is
// unchanged; a plan without data files comes back as it is, with none.
func withShardData(p *plan.Plan) (*plan.Plan, map[string][]byte, error) {
	files := map[string][]byte{}
	out, err := moveData(p, func(d *plan.DataSource) (*plan.DataSource, error) {
		raw, err := os.ReadFile(d.Path())
		if err != nil {
			return nil, fmt.Errorf("--shards: read the data file %s for the shard containers: %w", d.File, err)
		}
		moved, err := d.Resolved()
		if err != nil {
			return nil, err
		}
		moved.File = path.Join(shardDataDir, fmt.Sprintf("%d-%s", len(files), filepath.Base(d.Path())))
		files[moved.File] = raw
		return moved, nil
	})
	return out, files, err
}

// moveData is p with every data source (the plan's and each scenario's)
// replaced by move's copy of it.
func moveData(p *plan.Plan, move func(*plan.DataSource) (*plan.DataSource, error)) (*plan.Plan, error) {
	if p.Data == nil && !slices.ContainsFunc(p.Scenarios, func(s plan.Scenario) bool { return s.Data != nil }) {
		return p, nil
	}
	out := *p
	var err error
	if p.Data != nil {
		if out.Data, err = move(p.Data); err != nil {
			return nil, err
		}
	}
	out.Scenarios = slices.Clone(p.Scenarios)
	for i, s := range out.Scenarios {
		if s.Data != nil {
			if out.Scenarios[i].Data, err = move(s.Data); err != nil {
				return nil, err
			}
		}
	}
	return &out, nil
}

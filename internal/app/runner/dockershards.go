package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// Docker shards: with Options.Shards > 1 on the docker provider, the load
// is played by that many leakbench containers on the stack's private
// network — `leakbench run --shard i/N --start-at T`, load only, against
// the gateway's internal address — while this process probes the
// database as in any run. Their run directories are copied out and merged
// (package merge: counts summed, percentiles exact, thresholds judged on
// the merged result), and the merged load files are the run's.

// shardInput is where a shard container finds its plan and tokens, and
// writes its run directory.
const shardInput = "/shard"

// shardStartDelay is how far ahead the shards' common start is set: time
// for every container to start and read its plan.
const shardStartDelay = 8 * time.Second

// shardFiles are the run-directory files a shard writes that the merge
// reads (and requests.jsonl for the join).
var shardFiles = []string{rundir.SeriesFile, rundir.HistogramsFile, rundir.LoadFile, rundir.LoadHistogramsFile,
	rundir.RequestsFile, rundir.SummaryFile, rundir.ConfigFile}

// mergedFiles are the merged run's files that become this run's.
var mergedFiles = []string{rundir.SeriesFile, rundir.HistogramsFile, rundir.LoadFile, rundir.LoadHistogramsFile, rundir.RequestsFile}

// shardsTempPrefix names the shards' temporary directories: their
// results copied out of the containers, and the merge.
const shardsTempPrefix = "leakbench-shards-"

// shardsTempDir makes the shards' temporary directory, owned by this
// process, so that the next run's sweeps it when a kill -9 left it.
func shardsTempDir(log io.Writer) (string, error) {
	return fixtures.OwnedTempDir(shardsTempPrefix, log)
}

// playDockerShards plays p's load as n shard containers of env's stack
// and merges their results into dir.
func playDockerShards(ctx context.Context, p *plan.Plan, n int, env *fixtures.Env, dir string, logw io.Writer, name string) (*rundir.LoadResult, error) {
	target := env.StackGatewayURL()
	if target == "" {
		return nil, fmt.Errorf("--shards %d needs the docker provider with its gateway (this stack is %s)", n, env.Provider)
	}
	return playShards(ctx, p, n, env, target, env.Tokens, dir, logw, name)
}

// playShards plays p's load as n shard containers of env's stack against
// target, as the containers reach it, with tokens, and merges their
// results into dir.
func playShards(ctx context.Context, p *plan.Plan, n int, env *fixtures.Env, target string, tokens []string, dir string, logw io.Writer, name string) (*rundir.LoadResult, error) {
	p, dataFiles, err := withShardData(p)
	if err != nil {
		return nil, err
	}
	// Not the plan's JSON, which masks credential headers for the run
	// directory: the shards must send them as written (shardplan.go). It
	// goes into the containers only.
	planJSON, err := shardPlan(p)
	if err != nil {
		return nil, err
	}
	tmp, err := shardsTempDir(logw)
	if err != nil {
		return nil, fmt.Errorf("shards: %w", err)
	}
	defer os.RemoveAll(tmp)

	startAt := time.Now().Add(shardStartDelay).UTC().Truncate(time.Second)
	files := map[string][]byte{shardInput + "/plan.yaml": planJSON, // JSON is YAML
		shardInput + "/tokens": []byte(strings.Join(tokens, "\n") + "\n")}
	maps.Copy(files, dataFiles)
	jobs := make([]fixtures.LeakbenchJob, n)
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		job := fixtures.LeakbenchJob{Name: fmt.Sprintf("shard-%d", i), Files: files, CollectDir: dirs[i],
			Args: []string{"run", "--env", "external", "--target", target, "--scenario", shardInput + "/plan.yaml",
				"--tokens-file", shardInput + "/tokens", "--shard", fmt.Sprintf("%d/%d", i, n),
				"--start-at", startAt.Format(time.RFC3339), "--out", shardInput + "/out"}}
		for _, f := range shardFiles {
			job.Collect = append(job.Collect, shardInput+"/out/"+f)
		}
		jobs[i] = job
	}
	fmt.Fprintf(logw, "[%s] load: %d shard containers from %s, each %s\n", name, n, startAt.Format(time.TimeOnly), p.Describe())
	// However the plan ends, it ends within its own length plus a margin
	// for the containers' start and the shards' graceful stops.
	exits, err := env.RunLeakbench(ctx, jobs, shardStartDelay+planLength(p)+2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("shards: %w", err)
	}
	for _, x := range exits {
		// 99: a shard's own thresholds (judged again on the merge) failed.
		if x.ExitCode != 0 && x.ExitCode != 99 {
			return nil, fmt.Errorf("shard %s exited %d: %s", x.Name, x.ExitCode, redact.String(strings.TrimSpace(x.LogTail)))
		}
	}
	merged := filepath.Join(tmp, "merged")
	out, err := merge.Run(ctx, merge.Options{Dirs: dirs, Out: merged, Shards: n, Log: prefixed(logw, "["+name+"] ")})
	if err != nil {
		return nil, fmt.Errorf("merge the shards: %w", err)
	}
	if !out.Passed() && len(out.Problems) > 0 {
		return nil, fmt.Errorf("merge the shards: %s", out.Problems[0])
	}
	for _, f := range mergedFiles {
		if err := copyIfThere(filepath.Join(merged, f), filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	return out.Summary.Load, nil
}

// planLength is how long p's load lasts at most: its last scenario's end
// (profiles.LoadLength) and the longest graceful stop after it.
func planLength(p *plan.Plan) time.Duration {
	var stop time.Duration
	for _, s := range p.Scenarios {
		stop = max(stop, s.GracefulStop.D())
	}
	return profiles.LoadLength(p) + stop
}

// copyIfThere copies a file, if it exists, atomically.
func copyIfThere(from, to string) error {
	raw, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return rundir.WriteFile(to, raw)
}

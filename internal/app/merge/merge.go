// Package merge adds up the run directories of the shards of one plan
// (leakbench run --shard i/N) into one run directory that report, compare
// and signoff read like any other: counters summed, latency histograms
// merged (percentiles exact), thresholds judged on the merged result by the
// engine's own evaluation (results.Merge).
//
// A shard that is missing, failed or started late is named, and the merge
// does not pass; waiting for shards still running is bounded (Options.Wait).
// The database is one, however many shards load it: give the probe
// (--probe-dsn) to one shard; the merged run carries the probe of the
// lowest-indexed shard that had one (summary, samples, episodes; the
// request index, requests.jsonl, is not merged).
//
//	out, err := merge.Run(ctx, merge.Options{Dirs: dirs, Out: "out/merged", Wait: time.Minute})
//	if err == nil && !out.Passed() { ... out.Problems names the shards ... }
package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// DefaultMaxSkew is how much later than the first a shard may start its
// load before it counts as late.
const DefaultMaxSkew = 5 * time.Second

// pollInterval is how often Run looks for shards still running.
const pollInterval = 500 * time.Millisecond

// Options configures a merge.
type Options struct {
	// Dirs are the shards' run directories.
	Dirs []string
	// Out is the merged run directory; Force replaces a leakbench one.
	Out   string
	Force bool
	// Shards is how many shards there should be (0: as the shards say).
	Shards int
	// Wait is how long to wait for shards whose results are not there yet
	// (0: not at all).
	Wait time.Duration
	// MaxSkew is how much later than the earliest (or than its --start-at)
	// a shard may start (0: DefaultMaxSkew).
	MaxSkew time.Duration
	// Log gets progress lines (nil: none).
	Log io.Writer
}

// Problem is what is wrong with one shard.
type Problem struct {
	// Shard is "i/N", or the directory when its segment is unknown.
	Shard  string `json:"shard"`
	Dir    string `json:"dir,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Dir != "" && p.Dir != p.Shard {
		return fmt.Sprintf("shard %s (%s): %s", p.Shard, p.Dir, p.Reason)
	}
	return fmt.Sprintf("shard %s: %s", p.Shard, p.Reason)
}

// Outcome is what a merge produced.
type Outcome struct {
	Summary  *rundir.Summary
	Problems []Problem
	// Merged counts the shards whose results were merged.
	Merged int
}

// Passed reports whether every shard was there, finished and on time, and
// every threshold passed on the merged result.
func (o *Outcome) Passed() bool {
	return len(o.Problems) == 0 && o.Summary.Load != nil && o.Summary.Load.ThresholdsPassed()
}

// Run merges the shards in o.Dirs into o.Out. The error is non-nil only
// when nothing could be merged or written; problems with single shards are
// in the Outcome (and in the merged summary's error).
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if len(o.Dirs) == 0 {
		return nil, errors.New("merge: no shard directory given")
	}
	if o.MaxSkew <= 0 {
		o.MaxSkew = DefaultMaxSkew
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := rundir.Prepare(o.Out, o.Force); err != nil {
		return nil, err
	}
	waitForShards(ctx, o, logw)
	out := &Outcome{}
	type read struct {
		dir   string
		shard *results.Shard
		seg   plan.Segment
		sum   *rundir.Summary
	}
	var good []read
	for _, dir := range o.Dirs {
		sh, err := results.ReadShard(dir)
		if err != nil {
			reason := "no results: " + err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				reason = "no results (" + rundir.SeriesFile + " missing): it did not finish — killed, failed to start, or still running"
			}
			out.Problems = append(out.Problems, Problem{Shard: dir, Dir: dir, Reason: reason})
			continue
		}
		seg, err := plan.ParseSegment(sh.State.Segment)
		if err != nil {
			out.Problems = append(out.Problems, Problem{Shard: dir, Dir: dir, Reason: err.Error()})
			continue
		}
		sum, _ := reports.ReadRun(dir) // optional: the engine's files are what is merged
		good = append(good, read{dir, sh, seg, sum})
	}
	n := o.Shards
	for _, g := range good {
		if n == 0 {
			n = g.seg.Count
		}
		if g.seg.Count != n {
			out.Problems = append(out.Problems, Problem{Shard: g.seg.String(), Dir: g.dir, Reason: fmt.Sprintf("a shard of %d, not of %d", g.seg.Count, n)})
		}
	}
	// Each segment once; the ones nobody played are missing.
	seen := map[int]string{}
	var shards []*results.Shard
	var first *rundir.Summary
	probed := -1 // the lowest index of a shard that probed the database
	var probeDir string
	var probeSum *rundir.ProbeSummary
	for _, g := range good {
		if g.seg.Count != n {
			continue
		}
		if prev, dup := seen[g.seg.Index]; dup {
			out.Problems = append(out.Problems, Problem{Shard: g.seg.String(), Dir: g.dir, Reason: "played twice (also " + prev + "); this copy is left out"})
			continue
		}
		seen[g.seg.Index] = g.dir
		shards = append(shards, g.shard)
		if first == nil {
			first = g.sum
		}
		if g.sum != nil && g.sum.Probe != nil && (probed < 0 || g.seg.Index < probed) {
			probed, probeDir, probeSum = g.seg.Index, g.dir, g.sum.Probe
		}
		st := g.shard.State
		if st.EndReason != results.EndCompleted {
			out.Problems = append(out.Problems, Problem{Shard: g.seg.String(), Dir: g.dir, Reason: "its load ended " + st.EndReason})
		}
		if g.sum != nil && g.sum.Error != "" {
			out.Problems = append(out.Problems, Problem{Shard: g.seg.String(), Dir: g.dir, Reason: "failed: " + g.sum.Error})
		}
	}
	for i := range n {
		if _, ok := seen[i]; !ok {
			out.Problems = append(out.Problems, Problem{Shard: plan.Segment{Index: i, Count: n}.String(), Reason: "missing: no directory holds its results"})
		}
	}
	if len(shards) == 0 {
		return out, fmt.Errorf("merge: no shard's results to merge: %s", problemList(out.Problems))
	}
	out.Problems = append(out.Problems, late(shards, o.MaxSkew)...)
	// Shards of one run share their start time: another's is a result left
	// from another run (a pod that failed before it wrote its own).
	// The most shards' start time is the run's.
	votes := map[string]int{}
	want := shards[0].State.StartAt
	for _, sh := range shards {
		at := sh.State.StartAt
		votes[fmtTime(at)]++
		if votes[fmtTime(at)] > votes[fmtTime(want)] {
			want = at
		}
	}
	for _, sh := range shards {
		if at := sh.State.StartAt; !at.Equal(want) {
			out.Problems = append(out.Problems, Problem{Shard: sh.State.Segment, Dir: sh.Dir,
				Reason: fmt.Sprintf("from another run: --start-at %s, the others' is %s", fmtTime(at), fmtTime(want))})
		}
	}
	res, err := results.Merge(shards, o.Out)
	if err != nil {
		return out, err
	}
	out.Merged = len(shards)
	sum := &rundir.Summary{Name: "merged", Started: res.Started, Ended: res.Ended, EndReason: rundir.EndCompleted, Load: res}
	if first != nil {
		sum.Profile, sum.Environment = first.Profile, first.Environment
	}
	sum.Environment.Target = res.Config.Target
	if len(out.Problems) > 0 {
		sum.EndReason = rundir.EndFailed
		sum.Error = fmt.Sprintf("merged %d of %d shards: %s", len(shards), n, problemList(out.Problems))
	}
	if res.ScaleChanges, err = mergeLoad(o.Out, shards, res.Started, res.FirstErrors); err != nil {
		return out, err
	}
	if err := mergeRequests(o.Out, shards); err != nil {
		return out, err
	}
	if err := copyFile(shards[0].Dir, o.Out, rundir.ConfigFile); err != nil {
		return out, err
	}
	if probeSum != nil {
		// The database is one, whoever watched it: the probe of one shard
		// (the lowest that had one) is the merged run's.
		sum.Probe = probeSum
		for _, f := range []string{rundir.SamplesFile, rundir.EpisodesFile} {
			if err := copyFile(probeDir, o.Out, f); err != nil {
				return out, err
			}
		}
		fmt.Fprintf(logw, "probe: shard %d/%d's (%s)\n", probed, n, probeDir)
		// The probe's episodes against every shard's requests.
		if traced, joined, err := forensics.JoinEpisodes(o.Out); err != nil {
			return out, err
		} else if traced > 0 {
			fmt.Fprintf(logw, "episodes joined to the requests that left them: %d of %d with a trace id\n", joined, traced)
		}
	}
	if err := reports.WriteRun(o.Out, sum); err != nil {
		return out, err
	}
	out.Summary = sum
	fmt.Fprintf(logw, "merged %d of %d shards into %s\n", len(shards), n, o.Out)
	return out, nil
}

func problemList(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// waitForShards waits, for at most o.Wait, until every directory holds its
// shard's results.
func waitForShards(ctx context.Context, o Options, logw io.Writer) {
	if o.Wait <= 0 {
		return
	}
	deadline := time.Now().Add(o.Wait)
	announced := false
	for {
		var missing []string
		for _, d := range o.Dirs {
			if _, err := os.Stat(filepath.Join(d, rundir.SeriesFile)); err != nil {
				missing = append(missing, d)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return
		}
		if !announced {
			fmt.Fprintf(logw, "waiting up to %s for %d shard(s): %s\n", time.Until(deadline).Round(time.Second), len(missing), strings.Join(missing, ", "))
			announced = true
		}
		t := time.NewTimer(min(pollInterval, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// late names the shards that started their load more than skew after the
// earliest one, or after their common start (--start-at).
func late(shards []*results.Shard, skew time.Duration) []Problem {
	earliest := shards[0].State.Started
	for _, sh := range shards[1:] {
		if sh.State.Started.Before(earliest) {
			earliest = sh.State.Started
		}
	}
	var out []Problem
	for _, sh := range shards {
		st := sh.State
		ref, what := earliest, "the first shard"
		if !st.StartAt.IsZero() && st.StartAt.After(earliest) {
			ref, what = st.StartAt, "its start time "+st.StartAt.Format(time.RFC3339)
		}
		if d := st.Started.Sub(ref); d > skew {
			out = append(out, Problem{Shard: st.Segment, Dir: sh.Dir, Reason: fmt.Sprintf("late: its load started %s after %s (more than %s)", d.Round(time.Millisecond), what, skew)})
		}
	}
	return out
}

// mergeLoad writes load.jsonl: the shards' seconds added up, aligned on
// the seconds since the earliest start. Counters and active users are
// sums; a second's percentiles are those of the shards' interval
// histograms of that second merged (load.hlog; exact), or, when a shard
// has none (an older leakbench), the largest of the shards' (an upper
// bound; exact percentiles of the whole run are in summary.json).
//
// Each kind's first failure in first gets the users every shard had
// active in its second (a shard knows only its own).
func mergeLoad(out string, shards []*results.Shard, started time.Time, first map[string]rundir.FirstError) ([]rundir.ScaleChange, error) {
	bySec := map[int64]*rundir.LoadPoint{}
	// Each shard was scaled through its own dashboard: the run's changes
	// are all of theirs, in time order.
	var changes []rundir.ScaleChange
	for _, sh := range shards {
		f, err := os.Open(filepath.Join(sh.Dir, rundir.LoadFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rundir.LoadFile, err)
		}
		// A line cut short by a kill does not decode and is skipped; one
		// past jsonl.MaxLine is an error, not the end of the file.
		_, err = jsonl.Each(f, -1, func(p *rundir.LoadPoint) {
			sec := secondOf(p.Time, started)
			m := bySec[sec]
			if m == nil {
				m = &rundir.LoadPoint{Time: started.Add(time.Duration(sec+1) * time.Second), ElapsedSeconds: float64(sec + 1)}
				bySec[sec] = m
			}
			m.ActiveUsers += p.ActiveUsers
			m.Requests += p.Requests
			m.Failures += p.Failures
			m.Aborted += p.Aborted
			m.Iterations += p.Iterations
			m.DroppedIterations += p.DroppedIterations
			m.ReqPerSecond += p.ReqPerSecond
			m.P50Ms, m.P95Ms, m.P99Ms = max(m.P50Ms, p.P50Ms), max(m.P95Ms, p.P95Ms), max(m.P99Ms, p.P99Ms)
			m.HTTPRequests += p.HTTPRequests
			m.HTTPFailures += p.HTTPFailures
			m.HTTPP50Ms, m.HTTPP95Ms, m.HTTPP99Ms = max(m.HTTPP50Ms, p.HTTPP50Ms), max(m.HTTPP95Ms, p.HTTPP95Ms), max(m.HTTPP99Ms, p.HTTPP99Ms)
			m.Scale = append(m.Scale, p.Scale...)
			changes = append(changes, p.Scale...)
		})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(sh.Dir, rundir.LoadFile), err)
		}
	}
	if err := exactPercentiles(out, shards, started, bySec); err != nil {
		return nil, err
	}
	for kind, f := range first {
		if m := bySec[secondOf(f.At, started)]; m != nil {
			f.ActiveUsers = m.ActiveUsers
			first[kind] = f
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Time.Before(changes[j].Time) })
	secs := make([]int64, 0, len(bySec))
	for s := range bySec {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	return changes, rundir.WriteFileFunc(filepath.Join(out, rundir.LoadFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, s := range secs {
			if err := enc.Encode(bySec[s]); err != nil {
				return err
			}
		}
		return nil
	})
}

// copyFile copies the file name from one directory to another, if it is
// there.
func copyFile(from, to, name string) error {
	raw, err := os.ReadFile(filepath.Join(from, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return rundir.WriteFile(filepath.Join(to, name), raw)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}

package workers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// startDelay is how far ahead the workers' common start is set at least,
// and startDelayEach what each worker adds: time for every worker to
// start, read its plan and open its preflight session on a machine they
// share (the merge calls a worker more than 5 s late a problem).
const (
	startDelay     = 3 * time.Second
	startDelayEach = 250 * time.Millisecond
)

// stopGrace is how long stopped workers get to end their users and write
// their results before they are killed.
const stopGrace = 15 * time.Second

// GOMAXPROCS is the processors each worker is given: one, so that the Go
// scheduler never wakes a second processor for a user (ENGINE-NOTES: 1.27×
// the floor on one processor, 1.60× on two).
const GOMAXPROCS = 1

// Options configures Play.
type Options struct {
	// Command returns the command of one worker process: leakbench's own
	// binary with its hidden worker subcommand (Self). Play sets its
	// standard streams, environment additions and process attributes.
	Command func() *exec.Cmd
	// Layout is the worker count, their shares and source addresses
	// (NewLayout).
	Layout *Layout
	// PlanJSON is the plan with its secrets as written (runner's shard
	// encoding); it goes to the workers' standard input only.
	PlanJSON []byte
	// Target is the MCP endpoint; Tokens the users' bearer tokens.
	Target string
	Tokens []string
	// TLS and OAuth are the target's settings as the user gave them
	// (nil: not used); they go to the workers' standard input only.
	TLS   *TLSSettings
	OAuth *OAuthSettings
	// Dir is the run directory: each worker writes its own run directory
	// in it (worker-I), its log to logs/worker-I.log, and the merge's
	// files become the run's.
	Dir string
	// MaxDuration bounds the plan's load (its length and graceful stops);
	// workers still running after it and a margin are stopped.
	MaxDuration time.Duration
	// Log gets what happens; Progress the one live line a second.
	Log, Progress io.Writer
	// MetricsAddr, if set, serves the workers' live metrics merged
	// (package live: counts summed, histograms merged) at /metrics, with
	// Gatherer's beside them (the probe's; nil: none).
	MetricsAddr string
	Gatherer    prometheus.Gatherer
}

// Self is the worker command of this very binary: os.Executable with the
// hidden subcommand "worker" (leakbench worker).
func Self() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe, "worker")
}

// proc is one worker process.
type proc struct {
	seg   plan.Segment
	dir   string
	log   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// exit is how it ended (nil: exit status 0); done once it has.
	exit error
	done bool

	// snap is its latest live snapshot (Options.MetricsAddr).
	mu   sync.Mutex
	snap live.Snapshot
}

// readLive keeps the worker's latest live snapshot until its pipe ends
// (the worker exited).
func (p *proc) readLive(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		if s, err := live.Decode(sc.Bytes()); err == nil {
			p.mu.Lock()
			p.snap = s
			p.mu.Unlock()
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line too long: read on, so that the worker never blocks
}

// mergedLive is every worker's latest live snapshot, merged.
func mergedLive(procs []*proc) live.Snapshot {
	snaps := make([]live.Snapshot, 0, len(procs))
	for _, p := range procs {
		p.mu.Lock()
		snaps = append(snaps, p.snap)
		p.mu.Unlock()
	}
	return live.Merge(snaps)
}

type exited struct {
	i   int
	err error
}

// Play plays the plan as the layout's worker processes, each with
// GOMAXPROCS=1 and its slice, and merges their results exactly (package
// merge) into o.Dir. The merged result and the workers' record come back
// also with an error: a worker that died fails the run, is named, and the
// others' results are merged, the record marked incomplete. ctx's end
// stops every worker (their results are still merged); none outlives
// Play.
func Play(ctx context.Context, o Options) (*rundir.LoadResult, *rundir.Workers, error) {
	lay := o.Layout
	logw, progress := orDiscard(o.Log), orDiscard(o.Progress)
	if err := os.MkdirAll(filepath.Join(o.Dir, rundir.LogsDir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("workers: %w", err)
	}
	delay := max(startDelay, time.Duration(lay.Count)*startDelayEach)
	startAt := time.Now().Add(delay).UTC().Truncate(time.Second)
	procs := make([]*proc, lay.Count)
	dirs := make([]string, lay.Count)
	exits := make(chan exited, lay.Count)
	var readers sync.WaitGroup
	defer readers.Wait() // after the workers are gone (below), their pipes end
	defer func() {
		// Nothing outlives the run: a worker's whole process group goes,
		// even one that already exited (whatever it left behind), and
		// Play waits for every worker it started.
		waiting := 0
		for _, p := range procs {
			if p != nil && p.cmd != nil && p.cmd.Process != nil {
				killGroup(p.cmd)
				if !p.done {
					waiting++
				}
			}
		}
		for range waiting {
			e := <-exits
			procs[e.i].exit, procs[e.i].done = e.err, true
		}
	}()
	for i := range lay.Count {
		seg := plan.Segment{Index: i, Count: lay.Count}
		procs[i] = &proc{seg: seg, dir: filepath.Join(o.Dir, fmt.Sprintf("worker-%d", i)),
			log: filepath.Join(o.Dir, rundir.LogsDir, fmt.Sprintf("worker-%d.log", i))}
		dirs[i] = procs[i].dir
	}
	if o.MetricsAddr != "" {
		// Served before any worker starts, so that a bad address stops
		// the run before its load.
		srv, err := live.Serve(o.MetricsAddr, func() live.Snapshot { return mergedLive(procs) }, o.Gatherer)
		if err != nil {
			return nil, nil, err
		}
		defer srv.Close()
	}
	for i, p := range procs {
		if err := p.start(o, lay, startAt, i, exits, &readers); err != nil {
			return nil, nil, fmt.Errorf("start worker %s: %w", p.seg, err)
		}
	}
	fmt.Fprintf(logw, "load: %d worker processes (GOMAXPROCS=%d each) from %s, %s\n", lay.Count, GOMAXPROCS, startAt.Format(time.TimeOnly), sourcesLine(lay.Sources))

	died := watch(ctx, o, procs, exits, newLive(dirs), progress, delay)

	res, rec, err := collect(ctx, o, procs, dirs)
	switch {
	case died != nil:
		tail := logTail(died.log)
		return res, rec, fmt.Errorf("worker %s (pid %d) died: %s%s; the other workers were stopped and what they measured is merged, marked incomplete",
			died.seg, died.cmd.Process.Pid, describeExit(died.exit), tail)
	case err != nil:
		return res, rec, err
	case ctx.Err() != nil:
		return res, rec, ctx.Err()
	}
	return res, rec, nil
}

// start starts worker i and hands it its spec.
func (p *proc) start(o Options, lay *Layout, startAt time.Time, i int, exits chan<- exited, readers *sync.WaitGroup) error {
	if err := rundir.Prepare(p.dir, true); err != nil {
		return err
	}
	spec, err := json.Marshal(Spec{Plan: o.PlanJSON, Target: o.Target, Tokens: o.Tokens, TLS: o.TLS, OAuth: o.OAuth, Segment: p.seg.String(),
		StartAt: startAt, SourceAddrs: lay.Sources.PerWorker[i], RunDir: p.dir, Live: o.MetricsAddr != ""})
	if err != nil {
		return err
	}
	lf, err := os.Create(p.log)
	if err != nil {
		return err
	}
	defer lf.Close() // the child holds its own copy
	p.cmd = o.Command()
	p.cmd.Env = append(p.cmd.Environ(), fmt.Sprintf("GOMAXPROCS=%d", GOMAXPROCS))
	p.cmd.Stdout, p.cmd.Stderr = lf, lf
	isolate(p.cmd)
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return err
	}
	var liveR, liveW *os.File
	if o.MetricsAddr != "" {
		if liveR, liveW, err = os.Pipe(); err != nil {
			return err
		}
		p.cmd.ExtraFiles = []*os.File{liveW} // descriptor 3 (liveFD)
	}
	err = p.cmd.Start()
	if liveW != nil {
		liveW.Close() // the worker's copy is the pipe's only writer
	}
	if err != nil {
		if liveR != nil {
			liveR.Close()
		}
		return err
	}
	if liveR != nil {
		readers.Go(func() { p.readLive(liveR) })
	}
	go func() { exits <- exited{i, p.cmd.Wait()} }()
	// The spec is one line; the pipe stays open, its end the stop.
	if _, err := p.stdin.Write(append(spec, '\n')); err != nil {
		return fmt.Errorf("send the spec: %w", err)
	}
	return nil
}

// watch prints the live line every second until every worker has exited,
// and stops them all when ctx ends, when one dies (returned) or when the
// plan's time is up; workers that do not stop within stopGrace are killed.
func watch(ctx context.Context, o Options, procs []*proc, exits <-chan exited, lv *liveLine, progress io.Writer, delay time.Duration) (died *proc) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.NewTimer(delay + o.MaxDuration + time.Minute)
	defer deadline.Stop()
	var kill <-chan time.Time
	running := len(procs)
	stopping := false
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		for _, p := range procs {
			_ = p.stdin.Close() // the worker ends its users and writes its results
		}
		t := time.NewTimer(stopGrace)
		kill = t.C
	}
	done := ctx.Done()
	for running > 0 {
		select {
		case e := <-exits:
			p := procs[e.i]
			p.exit, p.done = e.err, true
			running--
			if e.err != nil && died == nil && !stopping {
				died = p
				fmt.Fprintf(orDiscard(o.Log), "worker %s (pid %d) died: %s; stopping the others\n", p.seg, p.cmd.Process.Pid, describeExit(e.err))
				stop()
			}
		case <-done:
			done = nil
			stop()
		case <-deadline.C:
			fmt.Fprintf(orDiscard(o.Log), "workers still running past the plan's length; stopping them\n")
			stop()
		case <-kill:
			for _, p := range procs {
				if !p.done {
					killGroup(p.cmd)
				}
			}
			kill = nil
		case <-tick.C:
			fmt.Fprintln(progress, lv.line(running, len(procs)))
		}
	}
	return died
}

// collect merges the workers' run directories into o.Dir and records each
// worker.
func collect(ctx context.Context, o Options, procs []*proc, dirs []string) (*rundir.LoadResult, *rundir.Workers, error) {
	lay := o.Layout
	rec := &rundir.Workers{Count: lay.Count, GOMAXPROCS: GOMAXPROCS, SourceAddrsFrom: lay.Sources.From,
		OpenFilesLimit: lay.Limits.OpenFiles, LocalPorts: lay.Limits.Ports(), Complete: true}
	for _, a := range lay.Sources.All {
		rec.SourceAddrs = append(rec.SourceAddrs, a.String())
	}
	var good []string
	for i, p := range procs {
		w := rundir.Worker{Segment: p.seg.String(), PID: p.cmd.Process.Pid, Users: lay.Needs[i].Users,
			Connections: lay.Needs[i].Conns, Exit: describeExit(p.exit)}
		for _, a := range lay.Sources.PerWorker[i] {
			w.SourceAddrs = append(w.SourceAddrs, a.String())
		}
		if sh, err := results.ReadShard(p.dir); err == nil {
			w.EndReason, w.Generator = sh.State.EndReason, sh.State.Generator
			for _, s := range sh.State.Scenarios {
				w.Requests += s.Requests
				w.Failures += s.Failures
			}
			if p.exit == nil {
				good = append(good, p.dir)
			}
		}
		if p.exit != nil || w.EndReason == "" {
			rec.Complete = false
		}
		fmt.Fprintf(orDiscard(o.Log), "worker %s (pid %d): %s, load %s, %d requests, %d failed, generator %s\n",
			w.Segment, w.PID, w.Exit, orNone(w.EndReason), w.Requests, w.Failures, generatorLine(w.Generator))
		rec.Workers = append(rec.Workers, w)
	}
	if len(good) == 0 {
		return nil, rec, errors.New("workers: no worker left results to merge")
	}
	tmp, err := os.MkdirTemp("", "leakbench-workers-merge-")
	if err != nil {
		return nil, rec, fmt.Errorf("merge the workers: %w", err)
	}
	defer os.RemoveAll(tmp)
	merged := filepath.Join(tmp, "merged")
	// Only the workers that finished: a dead worker's half-written files
	// are not passed off as results. Shards: the whole count, so that the
	// merge names the missing ones.
	out, err := merge.Run(context.WithoutCancel(ctx), merge.Options{Dirs: good, Out: merged, Shards: lay.Count})
	if err != nil {
		return nil, rec, fmt.Errorf("merge the workers: %w", err)
	}
	fmt.Fprintf(orDiscard(o.Log), "merged %d of %d workers' results exactly (counts summed, histograms merged)\n", out.Merged, lay.Count)
	for _, f := range mergedFiles {
		if err := copyIfThere(filepath.Join(merged, f), filepath.Join(o.Dir, f)); err != nil {
			return nil, rec, err
		}
	}
	// The merged request index has every worker's; theirs would double
	// the run directory's size.
	for _, d := range dirs {
		_ = os.Remove(filepath.Join(d, rundir.RequestsFile))
	}
	// A stopped run's workers ended interrupted, as it did: no problem of
	// theirs. A dead one is named by Play.
	if rec.Complete && len(out.Problems) > 0 && ctx.Err() == nil {
		return out.Summary.Load, rec, fmt.Errorf("merge the workers: %s", out.Problems[0])
	}
	return out.Summary.Load, rec, nil
}

// mergedFiles are the merge's files that become the run's.
var mergedFiles = []string{rundir.SeriesFile, rundir.HistogramsFile, rundir.LoadFile, rundir.LoadHistogramsFile, rundir.RequestsFile}

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

// describeExit says how a worker ended.
func describeExit(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// logTail is the end of a worker's log, for the error that names it.
func logTail(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	lines = lines[max(0, len(lines)-3):]
	return " (its log " + path + " ends: " + redact.String(strings.Join(lines, " / ")) + ")"
}

func sourcesLine(s Sources) string {
	switch s.From {
	case "":
		return "source addresses: the kernel's choice"
	case "flag":
		return fmt.Sprintf("%d source address(es) from --source-addrs", len(s.All))
	}
	return fmt.Sprintf("%d loopback source address(es) %s–%s", len(s.All), s.All[0], s.All[len(s.All)-1])
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func orNone(s string) string {
	if s == "" {
		return "none (no results)"
	}
	return s
}

// generatorLine is a worker's self-check in a few words.
func generatorLine(g *rundir.Generator) string {
	if g == nil {
		return "not recorded"
	}
	return fmt.Sprintf("%s (late p99 %.1f ms, %.2f cores)", g.Verdict, g.Lateness.P99Ms, g.EngineCoresMean)
}

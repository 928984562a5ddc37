package engine

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/engine/results"
)

// The generator's self-check: whether the engine kept to its own schedule
// and had CPU to spare, so that a report never passes leakbench's own
// delay off as the target's latency (rundir.Generator states the rule).
//
// Lateness is an actual start minus its due time, recorded by the users
// themselves into their shard (metrics.recordLate: the shard's lock, as
// every latency), for three kinds of due time:
//
//   - a think time's end: when the user's timer should have fired against
//     when the user ran again (think);
//   - an arrival-rate iteration: when it was due against when a user began
//     it (iterate);
//   - the first request after either: when it was due against when it was
//     sent (reqStart), which adds what the user did in between.
//
// The monitor merges the shards' lateness each second (metrics.interval)
// and samples the engine's CPU (getrusage) and the machine's (/proc/stat)
// beside it (genCheck.sample).

// think waits d, as sleep does, and records how late the user woke; the
// step after it is due at the same instant (reqStart).
func (v *vu) think(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if ctx.Err() == nil {
		v.began = true // a think the scenario's end cuts is an iteration under way, not a dropped one
	}
	due := time.Now().Add(d)
	if !v.sleep(ctx, d) {
		return false
	}
	v.late(due, time.Now())
	v.due = due
	return true
}

// late records that what was due at due started at now.
func (v *vu) late(due, now time.Time) { v.sr.e.m.recordLate(v.sh, now.Sub(due)) }

// minSampleSpan is the shortest interval whose CPU figures count towards
// the run's maximum and the busy seconds: /proc/stat counts in 10 ms
// ticks, so the sliver a run ends with says nothing of its load.
const minSampleSpan = tickEvery / 2

// genSecond is the generator's figures for one interval.
type genSecond struct {
	cores        float64 // the engine's CPU, in cores
	busy         float64 // the machine's busy share, [0, 1]
	machineKnown bool
	late         rundir.LatencyStats // lateness in the interval (Count 0: nothing was due)
}

// genCheck accumulates the generator's self-check over a run. It exists
// from the engine's start, so that a scrape never races its creation; the
// run begins it, the monitor goroutine alone samples it; result and
// lateness read it once the monitor has finished (or from the monitor,
// for abortOnFail thresholds); live, from a scrape, reads only the last
// second, under mu.
type genCheck struct {
	begun             bool // false: no run played
	cpus, machineCPUs int
	started           time.Time
	startCPU          time.Duration

	lastAt      time.Time
	lastCPU     time.Duration
	lastMachine procstat.CPUTimes
	machineOK   bool

	run               *hdrhistogram.Histogram // lateness over the run, µs
	coresMax, busyMax float64
	// Streaks of full seconds in a row, now and the longest: of the
	// engine's own cores (rule 2) and of the machine (rule 3).
	cpuRun, cpuLongest         int
	machineRun, machineLongest int

	mu   sync.Mutex
	last *live.Generator
}

func newGenCheck() *genCheck { return &genCheck{run: hdrlog.New()} }

// begin starts the self-check at the run's start.
func (g *genCheck) begin(started time.Time) {
	g.begun = true
	g.cpus, g.machineCPUs = min(runtime.GOMAXPROCS(0), runtime.NumCPU()), runtime.NumCPU()
	g.started, g.startCPU = started, procstat.Self()
	g.lastAt, g.lastCPU = started, g.startCPU
	g.lastMachine, g.machineOK = procstat.Machine()
}

// sample closes the interval that ends now, whose lateness is in late.
func (g *genCheck) sample(now time.Time, late *hdrhistogram.Histogram) genSecond {
	cpu := procstat.Self()
	span := now.Sub(g.lastAt)
	var s genSecond
	if span > 0 {
		s.cores = round3((cpu - g.lastCPU).Seconds() / span.Seconds())
	}
	if g.machineOK {
		if m, ok := procstat.Machine(); ok {
			s.busy, s.machineKnown = round3(procstat.BusyShare(g.lastMachine, m)), true
			g.lastMachine = m
		}
	}
	s.late = results.Stats(late)
	g.run.Merge(late)
	if span >= minSampleSpan {
		g.coresMax = max(g.coresMax, s.cores)
		g.busyMax = max(g.busyMax, s.busy)
		g.cpuRun, g.cpuLongest = streak(cpuFull(s, g.cpus), g.cpuRun, g.cpuLongest)
		g.machineRun, g.machineLongest = streak(machineFull(s, g.machineCPUs), g.machineRun, g.machineLongest)
	}
	g.lastAt, g.lastCPU = now, cpu
	lg := &live.Generator{CPUs: g.cpus, Cores: s.cores, MachineBusy: s.busy, MachineKnown: s.machineKnown,
		LateSamples: s.late.Count, LateP50: s.late.P50Ms / 1000, LateP99: s.late.P99Ms / 1000, LateMax: s.late.MaxMs / 1000}
	g.mu.Lock()
	g.last = lg
	g.mu.Unlock()
	return s
}

// cpuFull: the engine used (nearly) every core it may run on — rule 2.
func cpuFull(s genSecond, cpus int) bool {
	return s.cores >= rundir.GeneratorBusyShare*float64(cpus)
}

// machineFull: the machine was (nearly) all busy, at least half of it
// the engine — rule 3.
func machineFull(s genSecond, machineCPUs int) bool {
	return s.machineKnown && s.busy >= rundir.GeneratorBusyShare && s.cores >= 0.5*s.busy*float64(machineCPUs)
}

func streak(full bool, cur, longest int) (int, int) {
	if !full {
		return 0, longest
	}
	return cur + 1, max(longest, cur+1)
}

// live is the last second's figures for a scrape (nil before the first).
func (g *genCheck) live() *live.Generator {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last
}

// lateness is the run's lateness so far (empty before the run): what the
// generator_lag threshold judges.
func (g *genCheck) lateness() *hdrhistogram.Histogram { return g.run }

// result is the run's self-check, once the monitor has taken its last
// sample; dropped is the run's dropped iterations. It is nil when no run
// was played (results.Merge states the shards' own).
func (g *genCheck) result(dropped int64) *rundir.Generator {
	if !g.begun {
		return nil
	}
	r := &rundir.Generator{
		EngineCPUs:        g.cpus,
		EngineCoresMax:    g.coresMax,
		MachineCPUs:       g.machineCPUs,
		MachineBusyMax:    g.busyMax,
		Lateness:          results.Stats(g.run),
		DroppedIterations: dropped,
	}
	if wall := g.lastAt.Sub(g.started); wall > 0 {
		r.EngineCoresMean = round3((g.lastCPU - g.startCPU).Seconds() / wall.Seconds())
	}
	r.Judge(g.cpuLongest, g.machineLongest)
	return r
}

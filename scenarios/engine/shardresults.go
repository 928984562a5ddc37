package engine

// Mergeable results: a run's series as HdrHistogram log + counters, and
// the merge of several runs (the shards of one plan) into one Result.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// opHTTPName is the Method of http steps' series in series.json.
const opHTTPName = "http"

func opName(op uint8) string {
	if op == opHTTP {
		return opHTTPName
	}
	return opNames[op]
}

func opByName(name string) (uint8, bool) {
	if name == opHTTPName {
		return opHTTP, true
	}
	for i, n := range opNames {
		if n == name {
			return uint8(i), true
		}
	}
	return 0, false
}

func kindsMap(k *[mcp.NumKinds]int64) map[string]int64 {
	var m map[string]int64
	for i, n := range k {
		if n != 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[mcp.Kinds[i]] = n
		}
	}
	return m
}

// state is what e counted, as series.json has it, with the histogram of
// each series in the same order.
func (e *engine) state(res *rundir.LoadResult, startAt time.Time) (*rundir.SeriesState, []*hdrhistogram.Histogram) {
	st := &rundir.SeriesState{
		Segment: e.segment.String(), Plan: res.Plan, StartAt: startAt,
		Started: res.Started, Ended: res.Ended, EndReason: res.EndReason,
		PeakUsers: e.m.all.peak.Load(), MinUsers: max(e.m.all.vusMin.Load(), 0),
		Checks: res.Checks, ErrorSamples: res.ErrorSamples, FirstErrors: res.FirstErrors,
	}
	all := e.m.collect(nil)
	hists := make([]*hdrhistogram.Histogram, 0, len(all)+1)
	if res.Generator != nil {
		st.Generator, st.LatenessTag = res.Generator, latenessTag
		hists = append(hists, e.gen.lateness())
	}
	for i, g := range all {
		st.Series = append(st.Series, rundir.SeriesCounts{
			Tag: "s" + strconv.Itoa(i), Scenario: e.runs[g.key.scen].cs.Name, Method: opName(g.key.op),
			Name: e.m.name(g.key.name), Status: int(g.key.status),
			Requests: g.reqs, Failed: g.failed, Aborted: g.aborted, Cancelled: g.cancelled, Kinds: kindsMap(&g.kinds),
		})
		hists = append(hists, g.hist)
	}
	for _, sr := range e.runs {
		sc := sr.sc
		var kinds [mcp.NumKinds]int64
		for k := range kinds {
			kinds[k] = sc.kinds[k].Load()
		}
		st.Scenarios = append(st.Scenarios, rundir.ScenarioCounts{
			Name: sr.cs.Name, Requests: sc.requests.Load(), Failures: sc.failures.Load(), Aborted: sc.aborted.Load(),
			Iterations: sc.iterations.Load(), DroppedIterations: sc.dropped.Load(), Kinds: kindsMap(&kinds),
			PeakUsers: sc.peak.Load(), MinUsers: max(sc.vusMin.Load(), 0),
			Reinits: sc.reinits.Load(), InitRetries: sc.initRetries.Load(), AbortedUsers: sc.retired.Load(), EndedSessions: sc.ended.Load(),
			Protocol: sc.protocols.snapshot(), Features: sc.features.snapshot(),
		})
	}
	return st, hists
}

// writeSeries writes histograms.hlog and series.json into dir.
func (e *engine) writeSeries(dir string, res *rundir.LoadResult, startAt time.Time) error {
	st, hists := e.state(res, startAt)
	if err := WriteHistogramLog(filepath.Join(dir, rundir.HistogramsFile), st, hists); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", rundir.SeriesFile, err)
	}
	return rundir.WriteFile(filepath.Join(dir, rundir.SeriesFile), append(raw, '\n'))
}

// WriteHistogramLog writes the series' histograms (histograms.hlog), each
// over the run's span and tagged with st.Series[i].Tag.
func WriteHistogramLog(path string, st *rundir.SeriesState, hists []*hdrhistogram.Histogram) error {
	tags := make([]string, 0, len(st.Series)+1)
	if st.LatenessTag != "" {
		tags = append(tags, st.LatenessTag)
	}
	for _, s := range st.Series {
		tags = append(tags, s.Tag)
	}
	return hdrlog.Write(path, st.Started, st.Ended, "leakbench "+rundir.SeriesFile+" names each tag's series; values in microseconds, max column in seconds", tags, hists)
}

// Shard is one run's mergeable result: its series.json and the histogram
// of each of its series (by tag).
type Shard struct {
	Dir   string
	State *rundir.SeriesState
	Hists map[string]*hdrhistogram.Histogram
}

// ReadShard reads series.json and histograms.hlog from a run directory.
func ReadShard(dir string) (*Shard, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.SeriesFile))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.SeriesFile, err)
	}
	var st rundir.SeriesState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.SeriesFile, err)
	}
	if len(st.Plan) == 0 {
		return nil, fmt.Errorf("read %s: no plan", rundir.SeriesFile)
	}
	f, err := os.Open(filepath.Join(dir, rundir.HistogramsFile))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.HistogramsFile, err)
	}
	defer f.Close()
	hists, err := hdrlog.Read(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.HistogramsFile, err)
	}
	for _, s := range st.Series {
		if hists[s.Tag] == nil {
			return nil, fmt.Errorf("read %s: no histogram tagged %s (series %s %s)", rundir.HistogramsFile, s.Tag, s.Scenario, s.Method)
		}
	}
	return &Shard{Dir: dir, State: &st, Hists: hists}, nil
}

// Merge adds up the results of the shards of one plan into the Result one
// process playing the whole plan would have produced: every counter
// summed, every latency histogram merged (percentiles exact), thresholds
// judged on the merged series by the engine's own evaluation. Gauges
// (peak users) are summed: shards need not peak at once, so the merged
// peak is an upper bound. The run spans the earliest start to the latest
// end; it completed only if every shard did. Merge checks that the shards
// played one plan; whether each segment is there once is the caller's.
//
// With dir set, the merged series are written there too (histograms.hlog,
// series.json), so that merged results merge again.
func Merge(shards []*Shard, dir string) (*rundir.LoadResult, error) {
	e, res, err := merge(shards)
	if err != nil || dir == "" {
		return res, err
	}
	if err := e.writeSeries(dir, res, time.Time{}); err != nil {
		return nil, err
	}
	return res, nil
}

func merge(shards []*Shard) (*engine, *rundir.LoadResult, error) {
	if len(shards) == 0 {
		return nil, nil, errors.New("merge: no shard")
	}
	recorded := shards[0].State.Plan
	want := compactJSON(recorded)
	for _, sh := range shards[1:] {
		if !bytes.Equal(compactJSON(sh.State.Plan), want) {
			return nil, nil, fmt.Errorf("merge: %s played another plan than %s", sh.Dir, shards[0].Dir)
		}
	}
	p, err := scenariofile.ReadRecorded(recorded)
	if err != nil {
		return nil, nil, fmt.Errorf("merge: the plan of %s: %w", shards[0].Dir, err)
	}
	cp, err := plan.Compile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("merge: the shards' plan: %w", err)
	}
	e := newEngine(cp, nil, RunOptions{})
	e.client.CloseIdleConnections()
	scenIdx := map[string]int{}
	for i, sr := range e.runs {
		scenIdx[sr.cs.Name] = i
	}
	sh0 := e.m.shards[0]
	reason := EndCompleted
	var ended time.Time
	for n, sh := range shards {
		st := sh.State
		if n == 0 || st.Started.Before(e.started) {
			e.started = st.Started
		}
		if st.Ended.After(ended) {
			ended = st.Ended
		}
		if st.EndReason != EndCompleted && reason == EndCompleted {
			reason = st.EndReason
		}
		e.m.all.peak.Add(st.PeakUsers)
		e.m.all.vusMin.Add(st.MinUsers)
		for _, s := range st.Series {
			i, ok := scenIdx[s.Scenario]
			op, okOp := opByName(s.Method)
			if !ok || !okOp {
				return nil, nil, fmt.Errorf("merge: %s: series of unknown scenario %q or method %q", sh.Dir, s.Scenario, s.Method)
			}
			g := sh0.get(seriesKey{scen: uint16(i), op: op, status: uint16(s.Status), name: e.m.nameID(s.Name)})
			g.hist.Merge(sh.Hists[s.Tag])
			g.reqs += s.Requests
			g.failed += s.Failed
			g.aborted += s.Aborted
			g.cancelled += s.Cancelled
			for k, v := range s.Kinds {
				if ki := mcp.KindIndex(k); ki >= 0 {
					g.kinds[ki] += v
				}
			}
		}
		for _, s := range st.Scenarios {
			i, ok := scenIdx[s.Name]
			if !ok {
				return nil, nil, fmt.Errorf("merge: %s: unknown scenario %q", sh.Dir, s.Name)
			}
			sc := e.m.scen[i]
			sc.requests.Add(s.Requests)
			sc.failures.Add(s.Failures)
			sc.aborted.Add(s.Aborted)
			sc.iterations.Add(s.Iterations)
			sc.dropped.Add(s.DroppedIterations)
			sc.peak.Add(s.PeakUsers)
			sc.vusMin.Add(s.MinUsers)
			sc.reinits.Add(s.Reinits)
			sc.initRetries.Add(s.InitRetries)
			sc.retired.Add(s.AbortedUsers)
			sc.ended.Add(s.EndedSessions)
			for v, n := range s.Protocol {
				sc.protocols.addN(v, n)
			}
			sc.features.addMerged(s.Features)
			for k, v := range s.Kinds {
				if ki := mcp.KindIndex(k); ki >= 0 {
					sc.kinds[ki].Add(v)
				}
			}
		}
		for _, c := range st.Checks {
			i, ok := scenIdx[c.Scenario]
			if !ok {
				continue
			}
			for id, name := range e.runs[i].cs.Checks {
				if name != c.Check {
					continue
				}
				cc := &e.m.checks.byScen[i][id]
				cc.pass.Add(c.Passes)
				cc.fail.Add(c.Fails)
				if cc.sample == "" {
					cc.sample = c.SampleAnswer
				}
				break
			}
		}
		for _, msg := range st.ErrorSamples {
			if len(e.m.samples) < maxSamples && !contains(e.m.samples, msg) {
				e.m.samples = append(e.m.samples, msg)
			}
		}
	}
	// vusMin starts at -1 (none seen); the shards' minimums were added to it.
	e.m.all.vusMin.Add(1)
	for _, sc := range e.m.scen {
		sc.vusMin.Add(1)
	}
	// The shards' lateness, merged before the thresholds are judged:
	// generator_lag holds the merged run to the shards' whole schedule.
	for _, sh := range shards {
		if h := sh.Hists[sh.State.LatenessTag]; h != nil {
			e.gen.run.Merge(h)
		}
	}
	e.end(reason)
	res := e.result(ended)
	res.Plan = recorded
	res.Config = configOf(cp)
	res.Generator = mergeGenerators(shards, e.gen.lateness())
	res.FirstErrors = mergeFirstErrors(shards, res.Started)
	return e, res, nil
}

// mergeFirstErrors is, for each kind, the earliest shard's first failure,
// measured from the merged run's start. Its ActiveUsers are left unknown
// (0): a shard's own count is not the run's, and package merge sets every
// shard's in that second from the merged load.jsonl.
func mergeFirstErrors(shards []*Shard, started time.Time) map[string]rundir.FirstError {
	var out map[string]rundir.FirstError
	for _, sh := range shards {
		for kind, f := range sh.State.FirstErrors {
			if cur, ok := out[kind]; ok && !f.At.Before(cur.At) {
				continue
			}
			if out == nil {
				out = map[string]rundir.FirstError{}
			}
			f.ElapsedSeconds = max(f.At.Sub(started).Seconds(), 0)
			f.ActiveUsers = 0
			out[kind] = f
		}
	}
	return out
}

// latenessTag tags a shard's lateness histogram in histograms.hlog.
const latenessTag = "generator-lateness"

// mergeGenerators is the shards' self-checks as one: saturated when any
// shard was (its reasons named by the shard's segment), the lateness
// exact over all of them (their histograms merged), the cores used and
// the dropped iterations summed (the cores' maximum so an upper bound, as
// peak users), the machine figures the busiest shard's (shards may share
// one machine); lateness is the shards' histograms merged. Nil — "not recorded" — when a shard has no record: a
// merge never states a self-check it could not see whole.
func mergeGenerators(shards []*Shard, lateness *hdrhistogram.Histogram) *rundir.Generator {
	g := &rundir.Generator{Verdict: rundir.GeneratorKeptUp}
	for _, sh := range shards {
		sg, h := sh.State.Generator, sh.Hists[sh.State.LatenessTag]
		if sg == nil || h == nil {
			return nil
		}
		if sg.Verdict == rundir.GeneratorSaturated {
			g.Verdict = rundir.GeneratorSaturated
			for _, r := range sg.Reasons {
				g.Reasons = append(g.Reasons, "shard "+sh.State.Segment+": "+r)
			}
		}
		g.EngineCPUs += sg.EngineCPUs
		g.EngineCoresMean = round3(g.EngineCoresMean + sg.EngineCoresMean)
		g.EngineCoresMax = round3(g.EngineCoresMax + sg.EngineCoresMax)
		g.MachineCPUs = max(g.MachineCPUs, sg.MachineCPUs)
		g.MachineBusyMax = max(g.MachineBusyMax, sg.MachineBusyMax)
		g.BusySeconds = max(g.BusySeconds, sg.BusySeconds)
		g.DroppedIterations += sg.DroppedIterations
	}
	g.Lateness = statsOf(lateness)
	return g
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// compactJSON is raw without insignificant white space, so that two
// recordings of one plan compare equal however they were indented.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

package results

// Mergeable results: a run's series as HdrHistogram log + counters, and
// the merge of several runs (the shards of one plan) into one Result.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// latenessTag tags a run's lateness histogram in histograms.hlog.
const latenessTag = "generator-lateness"

// WriteSeries writes c's histograms.hlog and series.json into dir: what
// Merge adds shards up from. The lateness histogram goes with them when
// c.State has the generator's self-check.
func WriteSeries(dir string, c *Counts) error {
	st := *c.State
	hists := c.Hists
	if st.Generator != nil {
		st.LatenessTag = latenessTag
		hists = append([]*hdrhistogram.Histogram{c.Lateness}, hists...)
	}
	if err := WriteHistogramLog(filepath.Join(dir, rundir.HistogramsFile), &st, hists); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(&st, "", "  ")
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
// judged on the merged series by the engine's own evaluation (Judge).
// Gauges (peak users) are summed: shards need not peak at once, so the
// merged peak is an upper bound. The run spans the earliest start to the
// latest end; it completed only if every shard did. Merge checks that the
// shards played one plan; whether each segment is there once is the
// caller's.
//
// With dir set, the merged series are written there too (histograms.hlog,
// series.json), so that merged results merge again.
func Merge(shards []*Shard, dir string) (*rundir.LoadResult, error) {
	c, err := merge(shards)
	if err != nil {
		return nil, err
	}
	res := Summarize(c)
	res.Plan = c.State.Plan
	if dir == "" {
		return res, nil
	}
	if err := WriteSeries(dir, c); err != nil {
		return nil, err
	}
	return res, nil
}

// merge adds up the shards' counts.
func merge(shards []*Shard) (*Counts, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no shard")
	}
	recorded := shards[0].State.Plan
	want := compactJSON(recorded)
	for _, sh := range shards[1:] {
		if !bytes.Equal(compactJSON(sh.State.Plan), want) {
			return nil, fmt.Errorf("merge: %s played another plan than %s", sh.Dir, shards[0].Dir)
		}
	}
	p, err := scenariofile.ReadRecorded(recorded)
	if err != nil {
		return nil, fmt.Errorf("merge: the plan of %s: %w", shards[0].Dir, err)
	}
	cp, err := plan.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("merge: the shards' plan: %w", err)
	}
	st := &rundir.SeriesState{Segment: plan.Segment{}.String(), Plan: recorded, EndReason: EndCompleted, ErrorSamples: []string{}}
	c := &Counts{Plan: cp, State: st, Lateness: hdrlog.New()}
	scenIdx := map[string]int{}
	scens := make([]scenarioSum, len(cp.Scenarios))
	for i, cs := range cp.Scenarios {
		scenIdx[cs.Name] = i
		scens[i] = scenarioSum{ScenarioCounts: rundir.ScenarioCounts{Name: cs.Name}, checks: make([]rundir.CheckResult, len(cs.Checks))}
	}
	// A series is one scenario, method, name and status in every shard.
	// Each shard bounded its own names (the engine's maxNames); their
	// union is kept as recorded, so no shard's series is folded into
	// another's.
	type seriesKey struct {
		scenario, method, name string
		status                 int
	}
	series := map[seriesKey]*seriesSum{}
	var order []*seriesSum
	for n, sh := range shards {
		s := sh.State
		if n == 0 || s.Started.Before(st.Started) {
			st.Started = s.Started
		}
		if s.Ended.After(st.Ended) {
			st.Ended = s.Ended
		}
		if s.EndReason != EndCompleted && st.EndReason == EndCompleted {
			st.EndReason = s.EndReason
		}
		st.PeakUsers += s.PeakUsers
		st.MinUsers += s.MinUsers
		for _, sc := range s.Series {
			if _, ok := scenIdx[sc.Scenario]; !ok || !knownMethod(sc.Method) {
				return nil, fmt.Errorf("merge: %s: series of unknown scenario %q or method %q", sh.Dir, sc.Scenario, sc.Method)
			}
			k := seriesKey{scenario: sc.Scenario, method: sc.Method, name: sc.Name, status: sc.Status}
			g := series[k]
			if g == nil {
				g = &seriesSum{counts: rundir.SeriesCounts{Scenario: sc.Scenario, Method: sc.Method, Name: sc.Name, Status: sc.Status}, hist: hdrlog.New()}
				series[k] = g
				order = append(order, g)
			}
			g.hist.Merge(sh.Hists[sc.Tag])
			g.counts.Requests += sc.Requests
			g.counts.Failed += sc.Failed
			g.counts.Aborted += sc.Aborted
			g.counts.Cancelled += sc.Cancelled
			addKinds(&g.counts.Kinds, sc.Kinds)
		}
		for _, sc := range s.Scenarios {
			i, ok := scenIdx[sc.Name]
			if !ok {
				return nil, fmt.Errorf("merge: %s: unknown scenario %q", sh.Dir, sc.Name)
			}
			scens[i].add(&sc)
		}
		for _, ch := range s.Checks {
			if i, ok := scenIdx[ch.Scenario]; ok {
				scens[i].addCheck(cp.Scenarios[i].Checks, ch)
			}
		}
		for _, msg := range s.ErrorSamples {
			if len(st.ErrorSamples) < MaxErrorSamples && !slices.Contains(st.ErrorSamples, msg) {
				st.ErrorSamples = append(st.ErrorSamples, msg)
			}
		}
	}
	c.addSums(order, scens)
	// The shards' lateness, merged before the thresholds are judged:
	// generator_lag holds the merged run to the shards' whole schedule.
	for _, sh := range shards {
		if h := sh.Hists[sh.State.LatenessTag]; h != nil {
			c.Lateness.Merge(h)
		}
	}
	st.Generator = mergeGenerators(shards, c.Lateness)
	st.FirstErrors = mergeFirstErrors(shards, st.Started)
	return c, nil
}

// addSums puts the shards' sums into c: the series, tagged in order, and
// the scenarios with their checks, in plan order.
func (c *Counts) addSums(series []*seriesSum, scens []scenarioSum) {
	st := c.State
	for i, g := range series {
		g.counts.Tag = "s" + strconv.Itoa(i)
		st.Series = append(st.Series, g.counts)
		c.Hists = append(c.Hists, g.hist)
	}
	for i := range scens {
		sc := &scens[i]
		if !sc.featureSum.Empty() {
			sc.Features = &sc.featureSum
		}
		st.Scenarios = append(st.Scenarios, sc.ScenarioCounts)
		for id, name := range c.Plan.Scenarios[i].Checks {
			ch := sc.checks[id]
			ch.Scenario, ch.Check = sc.Name, name
			st.Checks = append(st.Checks, ch)
		}
	}
}

// seriesSum is one series added up over the shards.
type seriesSum struct {
	counts rundir.SeriesCounts
	hist   *hdrhistogram.Histogram
}

// scenarioSum is one scenario's counters added up over the shards, and
// its checks by id.
type scenarioSum struct {
	rundir.ScenarioCounts
	featureSum rundir.FeatureStats
	checks     []rundir.CheckResult
}

func (s *scenarioSum) add(o *rundir.ScenarioCounts) {
	s.Requests += o.Requests
	s.Failures += o.Failures
	s.Aborted += o.Aborted
	s.Iterations += o.Iterations
	s.DroppedIterations += o.DroppedIterations
	s.PeakUsers += o.PeakUsers
	s.MinUsers += o.MinUsers
	s.Reinits += o.Reinits
	s.InitRetries += o.InitRetries
	s.AbortedUsers += o.AbortedUsers
	s.EndedSessions += o.EndedSessions
	for v, n := range o.Protocol {
		if s.Protocol == nil {
			s.Protocol = map[string]int64{}
		}
		s.Protocol[v] += n
	}
	s.featureSum.Add(o.Features)
	addKinds(&s.Kinds, o.Kinds)
}

// addCheck adds a shard's count of one check to the first of the
// scenario's checks (names, by id) of its name.
func (s *scenarioSum) addCheck(names []string, c rundir.CheckResult) {
	for id, name := range names {
		if name != c.Check {
			continue
		}
		cc := &s.checks[id]
		cc.Passes += c.Passes
		cc.Fails += c.Fails
		if cc.SampleAnswer == "" {
			cc.SampleAnswer = c.SampleAnswer
		}
		return
	}
}

// addKinds adds the counts of src's error kinds into *dst, leaving out
// kinds this version does not know and counts of 0.
func addKinds(dst *map[string]int64, src map[string]int64) {
	for k, v := range src {
		if mcp.KindIndex(k) < 0 || v == 0 {
			continue
		}
		if *dst == nil {
			*dst = map[string]int64{}
		}
		(*dst)[k] += v
	}
}

// knownMethod reports whether a series' method is one the engine
// measures: a request method, an iteration or an http step.
func knownMethod(m string) bool {
	return m == MethodIteration || m == MethodHTTP || slices.Contains(plan.Methods, m)
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
	g.Lateness = Stats(lateness)
	return g
}

// round3 rounds to thousandths, as the engine rounds the figures it
// writes.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// compactJSON is raw without insignificant white space, so that two
// recordings of one plan compare equal however they were indented.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/lib/tty"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// tickEvery is the resolution of load.jsonl, of the live line and of
// abortOnFail checks.
const tickEvery = time.Second

// totals are the run's cumulative counters at one instant.
type totals struct {
	requests, failures, aborted, iterations, dropped, active int64
	httpRequests, httpFailures                               int64
}

func (e *engine) totals() totals {
	var t totals
	for _, sr := range e.runs {
		sc := sr.sc
		t.requests += sc.requests.Load()
		t.failures += sc.failures.Load()
		t.aborted += sc.aborted.Load()
		t.iterations += sc.iterations.Load()
		t.dropped += sc.dropped.Load()
		t.httpRequests += sc.httpRequests.Load()
		t.httpFailures += sc.httpFailures.Load()
	}
	t.active = e.m.all.active.Load()
	return t
}

// monitor owns the run's clock: every second it writes a line of
// load.jsonl, updates the progress output and checks abortOnFail
// thresholds.
type monitor struct {
	e          *engine
	out        *outputs
	progress   io.Writer
	tty        bool
	plainEvery time.Duration

	scratch, scratchHTTP, window *hdrhistogram.Histogram
	scratchLate                  *hdrhistogram.Histogram // the interval's lateness (generator.go)
	last                         totals
	lastTick                     time.Time
	lastPrint                    time.Time
	printed                      totals
	abortChecks                  []*plan.CompiledThreshold
	writeErr                     error
}

func newMonitor(e *engine, progress io.Writer, out *outputs) *monitor {
	m := &monitor{e: e, out: out, progress: progress, tty: tty.Is(progress),
		scratch: hdrlog.New(), scratchHTTP: hdrlog.New(), scratchLate: hdrlog.New(), window: hdrlog.New(), lastTick: e.started, lastPrint: e.started}
	e.gen.begin(e.started)
	// On a terminal the line is redrawn every second; plain output gets
	// at most about 60 lines per run.
	m.plainEvery = min(max((e.total/60).Round(time.Second), time.Second), 10*time.Second)
	for _, t := range e.cp.Thresholds {
		if t.AbortOnFail {
			m.abortChecks = append(m.abortChecks, t)
		}
	}
	return m
}

func (m *monitor) loop(done <-chan struct{}) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			m.tick(now)
		}
	}
}

// tick closes one interval.
func (m *monitor) tick(now time.Time) {
	e := m.e
	cur := e.totals()
	e.m.interval(m.scratch, m.scratchHTTP, m.scratchLate)
	gs := e.gen.sample(now, m.scratchLate)
	m.window.Merge(m.scratch)
	for _, sr := range e.runs {
		updateMin(&sr.sc.vusMin, sr.sc.active.Load())
	}
	updateMin(&e.m.all.vusMin, cur.active)
	if m.out != nil && (m.out.load != nil || m.out.watch != nil) {
		m.writeLine(now, cur, gs)
	}
	if m.out != nil && m.out.requests != nil {
		m.out.requests.flush()
	}
	m.last, m.lastTick = cur, now
	if m.progress != nil && (m.tty || now.Sub(m.lastPrint) >= m.plainEvery-tickEvery/10) {
		m.print(now, cur)
	}
	m.checkAborts(now)
}

func updateMin(v interface {
	Load() int64
	CompareAndSwap(old, new int64) bool
}, n int64) {
	for {
		old := v.Load()
		if (old >= 0 && old <= n) || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// writeLine writes the interval that ends now, whose latencies are in
// m.scratch and m.scratchHTTP, and the generator's figures gs, to
// load.jsonl and to the run's watcher.
func (m *monitor) writeLine(now time.Time, cur totals, gs genSecond) {
	d := now.Sub(m.lastTick).Seconds()
	l := rundir.LoadPoint{
		Time:              now.UTC(),
		ElapsedSeconds:    round3(now.Sub(m.e.started).Seconds()),
		ActiveUsers:       cur.active,
		Requests:          cur.requests - m.last.requests,
		Failures:          cur.failures - m.last.failures,
		Aborted:           cur.aborted - m.last.aborted,
		Iterations:        cur.iterations - m.last.iterations,
		DroppedIterations: cur.dropped - m.last.dropped,
		HTTPRequests:      cur.httpRequests - m.last.httpRequests,
		HTTPFailures:      cur.httpFailures - m.last.httpFailures,
		EngineCores:       gs.cores,
		MachineBusy:       gs.busy,
		LateSamples:       gs.late.Count,
		LateP50Ms:         gs.late.P50Ms,
		LateP99Ms:         gs.late.P99Ms,
		LateMaxMs:         gs.late.MaxMs,
		Scale:             m.e.takeScaleChanges(), // external.go
	}
	if d > 0 {
		l.ReqPerSecond = round3(float64(l.Requests) / d)
	}
	if h := m.scratch; h.TotalCount() > 0 {
		l.P50Ms = float64(h.ValueAtQuantile(50)) / 1000
		l.P95Ms = float64(h.ValueAtQuantile(95)) / 1000
		l.P99Ms = float64(h.ValueAtQuantile(99)) / 1000
	}
	if h := m.scratchHTTP; h.TotalCount() > 0 {
		l.HTTPP50Ms = float64(h.ValueAtQuantile(50)) / 1000
		l.HTTPP95Ms = float64(h.ValueAtQuantile(95)) / 1000
		l.HTTPP99Ms = float64(h.ValueAtQuantile(99)) / 1000
	}
	if m.out.watch != nil {
		m.out.watch.Second(l)
	}
	if m.out.load == nil || m.writeErr != nil {
		return
	}
	b, _ := json.Marshal(l) // plain numbers and strings: cannot fail
	m.out.loadHist.Interval(m.lastTick, now, hdrlog.Tagged{Tag: LoadTagAll, Hist: m.scratch}, hdrlog.Tagged{Tag: LoadTagHTTP, Hist: m.scratchHTTP})
	if _, err := m.out.load.Write(append(b, '\n')); err != nil {
		// Keep the run going; the error shows once on the progress output.
		m.writeErr = err
		if m.progress != nil {
			fmt.Fprintf(m.progress, "\nwrite %s: %v; the time series stops here\n", rundir.LoadFile, err)
		}
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// print writes the progress line: elapsed/total, users, req/s and p95
// since the last line, errors so far.
func (m *monitor) print(now time.Time, cur totals) {
	rate := float64(cur.requests-m.printed.requests) / max(now.Sub(m.lastPrint).Seconds(), 1e-9)
	p95 := "-"
	if m.window.TotalCount() > 0 {
		p95 = fmtMs(time.Duration(m.window.ValueAtQuantile(95)) * time.Microsecond)
	}
	line := fmt.Sprintf("elapsed %s/%s users %d req/s %.0f errors %d p95 %s",
		now.Sub(m.e.started).Round(time.Second), m.e.total, cur.active, rate, cur.failures, p95)
	if cur.dropped > 0 {
		line += fmt.Sprintf(" dropped %d", cur.dropped)
	}
	if m.tty {
		fmt.Fprintf(m.progress, "\r\x1b[2K%s", line)
	} else {
		fmt.Fprintln(m.progress, line)
	}
	m.window.Reset()
	m.printed, m.lastPrint = cur, now
}

// checkAborts evaluates abortOnFail thresholds whose delay has passed and
// ends the run at the first that fails.
func (m *monitor) checkAborts(now time.Time) {
	if len(m.abortChecks) == 0 {
		return
	}
	elapsed := now.Sub(m.e.started)
	var c *results.Counts
	for _, t := range m.abortChecks {
		if elapsed < t.DelayAbortEval.D() {
			continue
		}
		if c == nil {
			c = m.e.counts(now)
		}
		if r := results.Judge(c, t, elapsed); !r.Pass {
			m.e.end(results.EndAbortedByThreshold)
			if m.progress != nil {
				fmt.Fprintf(m.progress, "%sthreshold %s: %s failed (observed %g): aborting the run\n",
					map[bool]string{true: "\n"}[m.tty], r.Metric, r.Expression, r.Observed)
			}
			m.abortChecks = nil
			return
		}
	}
}

// finish closes the last, partial interval once every user has stopped:
// written unless it is a sliver in which nothing happened, and always
// counted in the generator's self-check.
func (m *monitor) finish(ended time.Time) {
	cur := m.e.totals()
	m.e.m.interval(m.scratch, m.scratchHTTP, m.scratchLate)
	gs := m.e.gen.sample(ended, m.scratchLate)
	if m.out != nil && m.out.load != nil && m.writeErr == nil &&
		(ended.Sub(m.lastTick) > tickEvery/100 || cur != m.last) {
		m.writeLine(ended, cur, gs)
	}
	if m.progress != nil && m.tty {
		m.print(ended, m.e.totals())
		fmt.Fprintln(m.progress)
	}
}

func fmtMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.0fms", ms)
}

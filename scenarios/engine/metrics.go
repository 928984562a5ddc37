package engine

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

const (
	// maxSampleLn bounds the length of an error sample (sample).
	maxSampleLn = 300
	// maxNames bounds the distinct tool and prompt names measured apart
	// (templated names could otherwise grow histograms without bound);
	// the rest are measured under otherName.
	maxNames  = 64
	otherName = "(other)"
)

// Operation indexes: the MCP methods, then the iteration pseudo-operation.
const (
	opInitialize uint8 = iota
	opPing
	opListTools
	opCallTool
	opListResources
	opReadResource
	opListPrompts
	opGetPrompt
	// opDiscover is server/discover: a step, and a 2026-07-28 user's
	// start where a 2025 user's is opInitialize.
	opDiscover
	opDelete
	// A step's extra requests in the 2026-07-28 era (roundtrips.go): a
	// task's, and the notification stream's opening.
	opTasksGet
	opTasksUpdate
	opTasksCancel
	opListen
	numRequestOps
	opIteration = numRequestOps
)

// opNames maps operation indexes to names.
var opNames = [...]string{plan.OpInitialize, plan.OpPing, plan.OpListTools, plan.OpCallTool, plan.OpListResources,
	plan.OpReadResource, plan.OpListPrompts, plan.OpGetPrompt, plan.OpDiscover, plan.OpDelete,
	plan.OpTasksGet, plan.OpTasksUpdate, plan.OpTasksCancel, plan.OpListen, results.MethodIteration}

func opIndex(name string) (uint8, bool) {
	for i, n := range opNames[:numRequestOps] {
		if n == name {
			return uint8(i), true
		}
	}
	return 0, false
}

// seriesKey identifies one series: a scenario, an operation and a tool or
// prompt name (0: none).
type seriesKey struct {
	scen   uint16
	op     uint8
	status uint16 // http steps: the answer's status (0: none)
	name   uint32
}

// series is what one shard measured of one series.
type series struct {
	hist                             *hdrhistogram.Histogram // answered requests (or iterations), µs
	reqs, failed, aborted, cancelled int64
	kinds                            [mcp.NumKinds]int64
}

// shard holds the series of a subset of users. Users are spread over a few
// shards so that recording takes an almost uncontended lock, and memory
// does not grow with the number of users.
type shard struct {
	mu     sync.Mutex
	series map[seriesKey]*series
	recent *hdrhistogram.Histogram // every request since the last tick
	// recentHTTP is the http steps' share of recent, for load.jsonl's
	// http_* figures.
	recentHTTP *hdrhistogram.Histogram
	// late holds how late, since the last tick, the shard's users started
	// what was due (generator.go): the generator's own lateness, µs.
	late *hdrhistogram.Histogram
	_    [64]byte // keep shards' locks on separate cache lines
}

func (sh *shard) get(k seriesKey) *series {
	s := sh.series[k]
	if s == nil {
		s = &series{hist: hdrlog.New()}
		sh.series[k] = s
	}
	return s
}

// scenCounters are one scenario's live counters.
type scenCounters struct {
	requests, failures, aborted, iterations, dropped atomic.Int64
	httpRequests, httpFailures                       atomic.Int64 // the http steps' share of requests, failures
	kinds                                            [mcp.NumKinds]atomic.Int64
	active, peak                                     atomic.Int64
	reinits, initRetries, retired, ended             atomic.Int64
	vusMin                                           atomic.Int64   // lowest active count the monitor saw while running; -1: none yet
	protocols                                        protocolCounts // users by protocol version (protocol.go)
	features                                         featureCounts  // 2026-07-28 features (roundtrips.go)
	_                                                [64]byte
}

// metrics collects everything a run counts.
type metrics struct {
	shards []*shard
	scen   []*scenCounters
	all    scenCounters // the run's own active/peak/vusMin gauges

	namesMu sync.RWMutex
	names   []string // by id; names[0] == ""
	nameIDs map[string]uint32

	samplesMu sync.Mutex
	samples   []string
	secrets   *redact.Secrets // masked in samples: the users' tokens

	checks *checkStats // answers.go

	// firstAt is when a failure of each kind was first recorded (Unix
	// nanoseconds; 0: never), firstUsers the users active then.
	firstAt, firstUsers [mcp.NumKinds]atomic.Int64
}

// noteFirst records the first failure of kind ki: one load a failure
// after the first, so that a run failing every request pays nothing.
func (m *metrics) noteFirst(ki int) {
	if m.firstAt[ki].Load() != 0 {
		return
	}
	if m.firstAt[ki].CompareAndSwap(0, time.Now().UnixNano()) {
		m.firstUsers[ki].Store(m.all.active.Load())
	}
}

// firstErrors is what noteFirst recorded, measured from started.
func (m *metrics) firstErrors(started time.Time) map[string]rundir.FirstError {
	var out map[string]rundir.FirstError
	for ki, name := range mcp.Kinds {
		ns := m.firstAt[ki].Load()
		if ns == 0 {
			continue
		}
		if out == nil {
			out = map[string]rundir.FirstError{}
		}
		at := time.Unix(0, ns).UTC()
		out[name] = rundir.FirstError{At: at, ElapsedSeconds: max(at.Sub(started).Seconds(), 0), ActiveUsers: m.firstUsers[ki].Load()}
	}
	return out
}

func newMetrics(scenarios int, secrets []string) *metrics {
	n := min(max(runtime.GOMAXPROCS(0), 2), 16)
	m := &metrics{shards: make([]*shard, n), scen: make([]*scenCounters, scenarios), secrets: redact.NewSecrets(secrets),
		names: []string{""}, nameIDs: map[string]uint32{"": 0}}
	for i := range m.shards {
		m.shards[i] = &shard{series: map[seriesKey]*series{}, recent: hdrlog.New(), recentHTTP: hdrlog.New(), late: hdrlog.New()}
	}
	m.all.vusMin.Store(-1)
	for i := range m.scen {
		m.scen[i] = &scenCounters{}
		m.scen[i].vusMin.Store(-1)
	}
	return m
}

func (m *metrics) shard(user int) *shard { return m.shards[user%len(m.shards)] }

// nameID interns a tool or prompt name.
func (m *metrics) nameID(name string) uint32 {
	m.namesMu.RLock()
	id, ok := m.nameIDs[name]
	m.namesMu.RUnlock()
	if ok {
		return id
	}
	m.namesMu.Lock()
	defer m.namesMu.Unlock()
	if id, ok := m.nameIDs[name]; ok {
		return id
	}
	if len(m.names) >= maxNames {
		name = otherName
		if id, ok := m.nameIDs[name]; ok {
			return id
		}
	}
	id = uint32(len(m.names))
	m.names = append(m.names, name)
	m.nameIDs[name] = id
	return id
}

func (m *metrics) name(id uint32) string {
	m.namesMu.RLock()
	defer m.namesMu.RUnlock()
	return m.names[id]
}

// countNotice counts the notifications/cancelled sent for a request the
// user gave up on (mcp/cancel.go).
func countNotice(fc *featureCounts, err error) {
	switch mcp.CancelNoticeOf(err) {
	case mcp.NoticeAccepted:
		fc.noticesSent.Add(1)
	case mcp.NoticeRefused:
		fc.noticesSent.Add(1)
		fc.noticesRefused.Add(1)
	case mcp.NoticeFailed:
		fc.noticesFailed.Add(1)
	}
}

// record counts one finished request.
func (m *metrics) record(sh *shard, k seriesKey, d time.Duration, err error) {
	sc := m.scen[k.scen]
	sc.requests.Add(1)
	isHTTP := k.op == opHTTP
	if isHTTP {
		sc.httpRequests.Add(1)
	}
	kind := mcp.Classify(err)
	ki := -1
	if kind != "" {
		countNotice(&sc.features, err)
		ki = mcp.KindIndex(kind)
		sc.kinds[ki].Add(1)
		switch kind {
		case mcp.KindCanceled:
		case mcp.KindAborted:
			sc.aborted.Add(1)
		default:
			sc.failures.Add(1)
			if isHTTP {
				sc.httpFailures.Add(1)
			}
			m.noteFirst(ki)
			m.sample(err)
		}
	}
	us := min(max(d.Microseconds(), hdrlog.MinMicros), hdrlog.MaxMicros)
	sh.mu.Lock()
	s := sh.get(k)
	s.reqs++
	if ki >= 0 {
		s.kinds[ki]++
	}
	switch kind {
	case mcp.KindCanceled:
		// We abandoned it: its latency says nothing about the target.
		s.cancelled++
	case mcp.KindAborted:
		// The scenario gave up at a set delay: that delay is no latency.
		s.aborted++
	default:
		if kind != "" {
			s.failed++
		}
		if d < 0 {
			break // not sent (a variable no capture set): no latency
		}
		s.hist.RecordValue(us)    //nolint:errcheck // us is in range
		sh.recent.RecordValue(us) //nolint:errcheck
		if isHTTP {
			sh.recentHTTP.RecordValue(us) //nolint:errcheck
		}
	}
	sh.mu.Unlock()
}

// recordIteration counts one completed iteration of scenario scen.
func (m *metrics) recordIteration(sh *shard, scen uint16, d time.Duration) {
	m.scen[scen].iterations.Add(1)
	us := min(max(d.Microseconds(), hdrlog.MinMicros), hdrlog.MaxMicros)
	sh.mu.Lock()
	sh.get(seriesKey{scen: scen, op: opIteration}).hist.RecordValue(us) //nolint:errcheck
	sh.mu.Unlock()
}

// sample keeps up to results.MaxErrorSamples distinct error messages, without secrets.
func (m *metrics) sample(err error) {
	m.samplesMu.Lock()
	full := len(m.samples) >= results.MaxErrorSamples
	m.samplesMu.Unlock()
	if full {
		return
	}
	msg := textutil.Truncate(m.secrets.Redact(err.Error()), maxSampleLn)
	m.samplesMu.Lock()
	defer m.samplesMu.Unlock()
	if len(m.samples) >= results.MaxErrorSamples {
		return
	}
	for _, s := range m.samples {
		if s == msg {
			return
		}
	}
	m.samples = append(m.samples, msg)
}

func (sc *scenCounters) userStarted() {
	n := sc.active.Add(1)
	for {
		p := sc.peak.Load()
		if n <= p || sc.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (sc *scenCounters) userStopped() { sc.active.Add(-1) }

// recordLate counts how late one due time was met: d is its actual start
// minus when it was due (generator.go).
func (m *metrics) recordLate(sh *shard, d time.Duration) {
	us := min(max(d.Microseconds(), hdrlog.MinMicros), hdrlog.MaxMicros)
	sh.mu.Lock()
	sh.late.RecordValue(us) //nolint:errcheck // us is in range
	sh.mu.Unlock()
}

// interval merges the latency histogram of every request recorded since
// its previous call into all, of the http steps' requests into http, and
// the lateness recorded since into late, and starts a new interval.
func (m *metrics) interval(all, http, late *hdrhistogram.Histogram) {
	all.Reset()
	http.Reset()
	late.Reset()
	for _, sh := range m.shards {
		sh.mu.Lock()
		all.Merge(sh.recent)
		sh.recent.Reset()
		if sh.recentHTTP.TotalCount() > 0 {
			http.Merge(sh.recentHTTP)
			sh.recentHTTP.Reset()
		}
		if sh.late.TotalCount() > 0 {
			late.Merge(sh.late)
			sh.late.Reset()
		}
		sh.mu.Unlock()
	}
}

// merged is the sum of one series over all shards.
type merged struct {
	key seriesKey
	series
}

// collect merges every series over the shards, keeping those for which
// keep returns true.
func (m *metrics) collect(keep func(seriesKey) bool) []*merged {
	byKey := map[seriesKey]*merged{}
	var out []*merged
	for _, sh := range m.shards {
		sh.mu.Lock()
		for k, s := range sh.series {
			if keep != nil && !keep(k) {
				continue
			}
			g := byKey[k]
			if g == nil {
				g = &merged{key: k, series: series{hist: hdrlog.New()}}
				byKey[k] = g
				out = append(out, g)
			}
			g.hist.Merge(s.hist)
			g.reqs += s.reqs
			g.failed += s.failed
			g.aborted += s.aborted
			g.cancelled += s.cancelled
			for i := range s.kinds {
				g.kinds[i] += s.kinds[i]
			}
		}
		sh.mu.Unlock()
	}
	return out
}

package scenarios

import (
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Operation names, the keys of Result.Latency (with "tools/call:<name>" per
// tool and "all").
const (
	OpInitialize = "initialize"
	OpListTools  = "tools/list"
	OpCallTool   = "tools/call"
	OpPing       = "ping"
	OpAll        = "all"
)

var baseOps = []string{OpInitialize, OpListTools, OpCallTool, OpPing}

// Histogram geometry: microseconds, 1 µs to 60 s, 3 significant digits.
const (
	histMinUs   = 1
	histMaxUs   = 60_000_000
	histSigFigs = 3
	maxSamples  = 10
	maxSampleLn = 300
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMinUs, histMaxUs, histSigFigs) }

// shard holds the histograms of a subset of users. Users are spread over a
// few shards so that recording takes an almost uncontended lock, and memory
// does not grow with the number of users (an HDR histogram of this geometry
// is ~100 KiB).
type shard struct {
	mu     sync.Mutex
	hists  map[string]*hdrhistogram.Histogram
	recent *hdrhistogram.Histogram // every op since the last progress line
	_      [64]byte                // keep shards' locks on separate cache lines
}

// metrics collects everything a run counts.
type metrics struct {
	shards []*shard

	requests, failures, iterations atomic.Int64
	reinits, initRetries, aborted  atomic.Int64
	active, peak                   atomic.Int64
	kinds                          [len(kindList)]atomic.Int64 // indexed like Kinds

	samplesMu sync.Mutex
	samples   []string
	secrets   []string // redacted from samples
}

func newMetrics(users int, secrets []string) *metrics {
	n := min(users, 2*runtime.GOMAXPROCS(0))
	m := &metrics{shards: make([]*shard, n), secrets: secrets}
	for i := range m.shards {
		m.shards[i] = &shard{hists: map[string]*hdrhistogram.Histogram{}, recent: newHist()}
	}
	return m
}

func (m *metrics) shard(user int) *shard { return m.shards[user%len(m.shards)] }

// record counts one finished request of op (and of toolKey, if not empty).
func (m *metrics) record(sh *shard, op, toolKey string, d time.Duration, err error) {
	m.requests.Add(1)
	kind := Classify(err)
	if kind != "" {
		m.kinds[kindIndex(kind)].Add(1)
		if kind == KindCanceled {
			return // we aborted it: its latency says nothing about the target
		}
		m.failures.Add(1)
		m.sample(err)
	}
	us := min(max(d.Microseconds(), histMinUs), histMaxUs)
	sh.mu.Lock()
	hist(sh, op).RecordValue(us) //nolint:errcheck // us is in range
	if toolKey != "" {
		hist(sh, toolKey).RecordValue(us) //nolint:errcheck
	}
	sh.recent.RecordValue(us) //nolint:errcheck
	sh.mu.Unlock()
}

func hist(sh *shard, key string) *hdrhistogram.Histogram {
	h := sh.hists[key]
	if h == nil {
		h = newHist()
		sh.hists[key] = h
	}
	return h
}

func kindIndex(kind string) int {
	for i, k := range kindList {
		if k == kind {
			return i
		}
	}
	return len(kindList) - 1 // unreachable: Classify returns only Kinds
}

// sample keeps up to maxSamples distinct error messages, without secrets.
func (m *metrics) sample(err error) {
	msg := err.Error()
	for _, s := range m.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[REDACTED]")
		}
	}
	msg = truncate(msg, maxSampleLn)
	m.samplesMu.Lock()
	defer m.samplesMu.Unlock()
	if len(m.samples) >= maxSamples {
		return
	}
	for _, s := range m.samples {
		if s == msg {
			return
		}
	}
	m.samples = append(m.samples, msg)
}

func (m *metrics) userStarted() {
	n := m.active.Add(1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (m *metrics) userStopped() { m.active.Add(-1) }

// recentP95 returns the p95 latency of all requests recorded since its
// previous call, and starts a new interval.
func (m *metrics) recentP95(scratch *hdrhistogram.Histogram) time.Duration {
	scratch.Reset()
	for _, sh := range m.shards {
		sh.mu.Lock()
		scratch.Merge(sh.recent)
		sh.recent.Reset()
		sh.mu.Unlock()
	}
	return time.Duration(scratch.ValueAtQuantile(95)) * time.Microsecond
}

// latency merges the shards into one LatencyStats per key, plus OpAll.
func (m *metrics) latency() map[string]LatencyStats {
	merged := map[string]*hdrhistogram.Histogram{}
	for _, sh := range m.shards {
		sh.mu.Lock()
		for k, h := range sh.hists {
			if merged[k] == nil {
				merged[k] = newHist()
			}
			merged[k].Merge(h)
		}
		sh.mu.Unlock()
	}
	all := newHist()
	for _, op := range baseOps {
		if h := merged[op]; h != nil {
			all.Merge(h)
		}
	}
	out := make(map[string]LatencyStats, len(merged)+1)
	for k, h := range merged {
		out[k] = statsOf(h)
	}
	out[OpAll] = statsOf(all)
	return out
}

func statsOf(h *hdrhistogram.Histogram) LatencyStats {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return LatencyStats{
		Count:  h.TotalCount(),
		MinMs:  ms(h.Min()),
		MeanMs: math.Round(h.Mean()) / 1000,
		P50Ms:  ms(h.ValueAtQuantile(50)),
		P90Ms:  ms(h.ValueAtQuantile(90)),
		P95Ms:  ms(h.ValueAtQuantile(95)),
		P99Ms:  ms(h.ValueAtQuantile(99)),
		MaxMs:  ms(h.Max()),
	}
}

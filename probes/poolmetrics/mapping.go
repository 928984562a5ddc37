package poolmetrics

import (
	"math"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	dto "github.com/prometheus/client_model/go"
)

// Mapping names the series of a service's own connection pool in its
// Prometheus metrics. Each field is a sample name as it appears in the
// exposition (a counter with its _total, a summary's _sum or _count); an
// empty field is a value the exporter does not have and reads as 0. All
// series of a name that carry the Labels are summed: several pools (or
// db_name values) of one service count as one pool unless Labels picks one.
type Mapping struct {
	Name string `json:"name,omitempty"`
	// Acquired: connections checked out of the pool right now.
	Acquired string `json:"acquired,omitempty"`
	// Idle: open connections waiting in the pool.
	Idle string `json:"idle,omitempty"`
	// Total: open connections; Acquired + Idle when empty.
	Total string `json:"total,omitempty"`
	// Max: the pool's size limit.
	Max string `json:"max,omitempty"`
	// AcquireWaitsTotal: acquires that had to wait (counter).
	AcquireWaitsTotal string `json:"acquire_waits_total,omitempty"`
	// AcquireWaitSecondsTotal: seconds spent waiting to acquire (counter).
	AcquireWaitSecondsTotal string `json:"acquire_wait_seconds_total,omitempty"`
	// CanceledAcquiresTotal: acquires given up: cancelled or timed out
	// (counter).
	CanceledAcquiresTotal string `json:"canceled_acquires_total,omitempty"`
	// UnclosedSessions: sessions the service knows it never closed.
	UnclosedSessions string `json:"unclosed_sessions,omitempty"`
	// Waiting: callers waiting for a connection right now.
	Waiting string `json:"waiting,omitempty"`
	// Labels restricts the series read to those with these label values.
	Labels map[string]string `json:"labels,omitempty"`
}

// builtinMappings are tried in this order when a target's mapping is auto.
var builtinMappings = []Mapping{
	{
		// The reference gateway's pgxpool collector (gateway-under-test).
		Name:                    "gateway",
		Acquired:                "mcp_gateway_db_pool_acquired_connections",
		Idle:                    "mcp_gateway_db_pool_idle_connections",
		Total:                   "mcp_gateway_db_pool_total_connections",
		Max:                     "mcp_gateway_db_pool_max_connections",
		AcquireWaitsTotal:       "mcp_gateway_db_pool_acquire_waits_total",
		AcquireWaitSecondsTotal: "mcp_gateway_db_pool_acquire_wait_seconds_total",
		CanceledAcquiresTotal:   "mcp_gateway_db_pool_acquires_canceled_total",
		UnclosedSessions:        "mcp_gateway_db_pool_unclosed_sessions",
	},
	{
		// Go's database/sql through client_golang's
		// collectors.NewDBStatsCollector. max_open_connections is 0 when
		// the pool is unlimited: such a pool never counts as saturated.
		Name:                    "go_sql",
		Acquired:                "go_sql_in_use_connections",
		Idle:                    "go_sql_idle_connections",
		Total:                   "go_sql_open_connections",
		Max:                     "go_sql_max_open_connections",
		AcquireWaitsTotal:       "go_sql_wait_count_total",
		AcquireWaitSecondsTotal: "go_sql_wait_duration_seconds_total",
	},
	{
		// HikariCP through Micrometer's Prometheus registry. HikariCP does
		// not count waits; its acquire timer covers every acquire, waited
		// or not, and its timeout counter the acquires that gave up.
		Name:                    "hikaricp",
		Acquired:                "hikaricp_connections_active",
		Idle:                    "hikaricp_connections_idle",
		Total:                   "hikaricp_connections",
		Max:                     "hikaricp_connections_max",
		AcquireWaitSecondsTotal: "hikaricp_connections_acquire_seconds_sum",
		CanceledAcquiresTotal:   "hikaricp_connections_timeout_total",
		Waiting:                 "hikaricp_connections_pending",
	},
	{
		// SQLAlchemy has no canonical exporter. These names follow
		// QueuePool.status() (checkedout, checkedin, size, overflow) as
		// hand-written exporters commonly do; other names need a mapping.
		Name:     "sqlalchemy",
		Acquired: "sqlalchemy_pool_checkedout",
		Idle:     "sqlalchemy_pool_checkedin",
		Max:      "sqlalchemy_pool_size",
	},
}

// seriesIndex holds a scrape's values by sample name.
type seriesIndex map[string][]seriesValue

type seriesValue struct {
	labels []*dto.LabelPair
	value  float64
}

// indexFamilies flattens metric families into sample names. A counter is
// found with and without its _total suffix (the text format names the
// family with it, OpenMetrics without); summaries and histograms give
// their _sum and _count.
func indexFamilies(fams []*dto.MetricFamily) seriesIndex {
	idx := make(seriesIndex)
	add := func(name string, m *dto.Metric, v float64) {
		if !math.IsNaN(v) {
			idx[name] = append(idx[name], seriesValue{m.GetLabel(), v})
		}
	}
	for _, f := range fams {
		name := f.GetName()
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				v := m.GetCounter().GetValue()
				add(name, m, v)
				if base, ok := strings.CutSuffix(name, "_total"); ok {
					add(base, m, v)
				} else {
					add(name+"_total", m, v)
				}
			case dto.MetricType_GAUGE:
				add(name, m, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(name, m, m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m, m.GetSummary().GetSampleSum())
				add(name+"_count", m, float64(m.GetSummary().GetSampleCount()))
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				add(name+"_sum", m, m.GetHistogram().GetSampleSum())
				add(name+"_count", m, float64(m.GetHistogram().GetSampleCount()))
			}
		}
	}
	return idx
}

// value sums the series of name that carry all of labels; ok is false when
// there is none.
func (idx seriesIndex) value(name string, labels map[string]string) (sum float64, ok bool) {
	if name == "" {
		return 0, false
	}
	for _, s := range idx[name] {
		if hasLabels(s.labels, labels) {
			sum += s.value
			ok = true
		}
	}
	return sum, ok
}

func hasLabels(have []*dto.LabelPair, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range have {
			if l.GetName() == k && l.GetValue() == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// detect returns the first built-in mapping whose acquired or max series
// the scrape has.
func (idx seriesIndex) detect() *Mapping {
	for i := range builtinMappings {
		m := &builtinMappings[i]
		if _, ok := idx.value(m.Acquired, nil); ok {
			return m
		}
		if _, ok := idx.value(m.Max, nil); ok {
			return m
		}
	}
	return nil
}

// read applies m; ok is false when the scrape has neither its acquired
// nor its max series.
func (idx seriesIndex) read(m *Mapping) (s rundir.AppPoolSample, ok bool) {
	var okAcq, okMax, okTotal bool
	s.Acquired, okAcq = idx.value(m.Acquired, m.Labels)
	s.Max, okMax = idx.value(m.Max, m.Labels)
	if !okAcq && !okMax {
		return s, false
	}
	s.Idle, _ = idx.value(m.Idle, m.Labels)
	if s.Total, okTotal = idx.value(m.Total, m.Labels); !okTotal {
		s.Total = s.Acquired + s.Idle
	}
	s.AcquireWaitsTotal, _ = idx.value(m.AcquireWaitsTotal, m.Labels)
	s.AcquireWaitSecondsTotal, _ = idx.value(m.AcquireWaitSecondsTotal, m.Labels)
	s.CanceledAcquiresTotal, _ = idx.value(m.CanceledAcquiresTotal, m.Labels)
	s.UnclosedSessions, _ = idx.value(m.UnclosedSessions, m.Labels)
	s.Waiting, _ = idx.value(m.Waiting, m.Labels)
	s.Mapping = m.Name
	s.Targets = 1
	return s, true
}

package poolmetrics

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	dto "github.com/prometheus/client_model/go"
)

// Mapping names the series of a service's own connection pool in its
// Prometheus metrics. Each field is a sample name as it appears in the
// exposition (a counter with its _total, a summary's or histogram's _sum
// or _count), with label matchers where the name alone is not enough
// (`db_client_connection_count{state="used"}`), and alternatives
// separated by "|": the first the scrape has is read (selector.go). A
// time whose name ends in _milliseconds (before _sum or _total) is read
// in seconds. An empty field is a value the exporter does not have and
// reads as 0. All series of a name that carry the Labels (and belong to
// the Pool) are summed: several pools (or db_name values) of one service
// count as one pool unless Labels or Pool picks one.
type Mapping struct {
	Name string `json:"name,omitempty"`
	// Base, in a custom mapping, names a built-in mapping whose fields
	// fill those left empty: {"base": "otel", "pool": "main"} reads one
	// pool of an OpenTelemetry exporter.
	Base string `json:"base,omitempty"`
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
	// UseSecondsTotal and UsesTotal: the seconds checkouts held their
	// connection, summed, and how many checkouts returned it (a histogram's
	// _sum and _count): the service's own view of release latency. When
	// the series UseSecondsTotal reads is a histogram's _sum, its buckets
	// are read too, for the use time's percentiles (as are
	// AcquireWaitSecondsTotal's, for the wait time's).
	UseSecondsTotal string `json:"use_seconds_total,omitempty"`
	UsesTotal       string `json:"uses_total,omitempty"`
	// Labels restricts the series read to those with these label values.
	Labels map[string]string `json:"labels,omitempty"`
	// Pool restricts the series read to one pool by the label
	// OpenTelemetry's exporters name it with: pool_name (semantic
	// conventions up to v1.24) or db_client_connection_pool_name.
	Pool string `json:"pool,omitempty"`
}

// compiled is a Mapping with its fields parsed.
type compiled struct {
	*Mapping
	acquired, idle, total, max, waits, waitSeconds, canceled, unclosed, waiting, useSeconds, uses field
}

// compile parses m's fields; its errors name the field.
func compile(m *Mapping) (*compiled, error) {
	c := &compiled{Mapping: m}
	for _, f := range []struct {
		name string
		src  string
		dst  *field
	}{
		{"acquired", m.Acquired, &c.acquired}, {"idle", m.Idle, &c.idle}, {"total", m.Total, &c.total},
		{"max", m.Max, &c.max}, {"acquire_waits_total", m.AcquireWaitsTotal, &c.waits},
		{"acquire_wait_seconds_total", m.AcquireWaitSecondsTotal, &c.waitSeconds},
		{"canceled_acquires_total", m.CanceledAcquiresTotal, &c.canceled},
		{"unclosed_sessions", m.UnclosedSessions, &c.unclosed}, {"waiting", m.Waiting, &c.waiting},
		{"use_seconds_total", m.UseSecondsTotal, &c.useSeconds}, {"uses_total", m.UsesTotal, &c.uses},
	} {
		p, err := parseField(f.src)
		if err != nil {
			return nil, fmt.Errorf("pool mapping %q, %s: %w", m.Name, f.name, err)
		}
		*f.dst = p
	}
	return c, nil
}

// withBase fills m's empty fields from the built-in mapping it names as
// its Base.
func withBase(m Mapping) (Mapping, error) {
	if m.Base == "" {
		return m, nil
	}
	i := slices.IndexFunc(builtinMappings, func(b Mapping) bool { return b.Name == m.Base })
	if i < 0 {
		return m, fmt.Errorf("pool mapping %q: unknown base %q (built-in: %s)", m.Name, m.Base, builtinNames())
	}
	b := builtinMappings[i]
	for _, p := range [][2]*string{
		{&m.Acquired, &b.Acquired}, {&m.Idle, &b.Idle}, {&m.Total, &b.Total}, {&m.Max, &b.Max},
		{&m.AcquireWaitsTotal, &b.AcquireWaitsTotal}, {&m.AcquireWaitSecondsTotal, &b.AcquireWaitSecondsTotal},
		{&m.CanceledAcquiresTotal, &b.CanceledAcquiresTotal}, {&m.UnclosedSessions, &b.UnclosedSessions},
		{&m.Waiting, &b.Waiting}, {&m.UseSecondsTotal, &b.UseSecondsTotal}, {&m.UsesTotal, &b.UsesTotal},
	} {
		if *p[0] == "" {
			*p[0] = *p[1]
		}
	}
	return m, nil
}

func builtinNames() string {
	names := make([]string, 0, len(builtinMappings))
	for _, m := range builtinMappings {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
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
	{
		// OpenTelemetry's database semantic conventions from v1.25
		// (db.client.connection.*) as a Prometheus exporter names them:
		// dots become underscores, a counter gains _total, a unit in
		// braces ({connection}) adds nothing and s adds _seconds — unless
		// the exporter is told to add no unit (WithoutUnits, the
		// Collector's add_metric_suffixes: false), or uses milliseconds.
		// The state label is db.client.connection.state, or state as the
		// conventions' own description and older exporters have it. The
		// wait histogram covers every acquire, waited or not, as
		// HikariCP's timer does: it gives the seconds waited, not the
		// acquires that waited.
		Name:                    "otel",
		Acquired:                `db_client_connection_count{db_client_connection_state="used"} | db_client_connection_count{state="used"}`,
		Idle:                    `db_client_connection_count{db_client_connection_state="idle"} | db_client_connection_count{state="idle"}`,
		Max:                     "db_client_connection_max",
		AcquireWaitSecondsTotal: "db_client_connection_wait_time_seconds_sum | db_client_connection_wait_time_milliseconds_sum | db_client_connection_wait_time_sum",
		CanceledAcquiresTotal:   "db_client_connection_timeouts_total",
		Waiting:                 "db_client_connection_pending_requests",
		UseSecondsTotal:         "db_client_connection_use_time_seconds_sum | db_client_connection_use_time_milliseconds_sum | db_client_connection_use_time_sum",
		UsesTotal:               "db_client_connection_use_time_seconds_count | db_client_connection_use_time_milliseconds_count | db_client_connection_use_time_count",
	},
	{
		// The same conventions up to v1.24 (db.client.connections.*,
		// times in ms, the state label state): what
		// opentelemetry-instrumentation-sqlalchemy exports (its usage
		// counter, unit "connections", which some exporters append) and
		// instrumentations that have not moved on.
		Name: "otel_legacy",
		Acquired: `db_client_connections_usage{state="used"} | db_client_connections_usage_connections{state="used"} | ` +
			`db_client_connections_usage{db_client_connections_state="used"} | db_client_connections_usage_connections{db_client_connections_state="used"}`,
		Idle: `db_client_connections_usage{state="idle"} | db_client_connections_usage_connections{state="idle"} | ` +
			`db_client_connections_usage{db_client_connections_state="idle"} | db_client_connections_usage_connections{db_client_connections_state="idle"}`,
		Max:                     "db_client_connections_max | db_client_connections_max_connections",
		AcquireWaitSecondsTotal: "db_client_connections_wait_time_milliseconds_sum | db_client_connections_wait_time_seconds_sum | db_client_connections_wait_time_sum",
		CanceledAcquiresTotal:   "db_client_connections_timeouts_total",
		Waiting:                 "db_client_connections_pending_requests | db_client_connections_pending_requests_requests",
		UseSecondsTotal:         "db_client_connections_use_time_milliseconds_sum | db_client_connections_use_time_seconds_sum | db_client_connections_use_time_sum",
		UsesTotal:               "db_client_connections_use_time_milliseconds_count | db_client_connections_use_time_seconds_count | db_client_connections_use_time_count",
	},
}

// builtinCompiled are builtinMappings parsed, in the same order.
var builtinCompiled = func() []*compiled {
	out := make([]*compiled, len(builtinMappings))
	for i := range builtinMappings {
		c, err := compile(&builtinMappings[i])
		if err != nil {
			panic(err) // a built-in mapping that does not parse is a bug (TestBuiltinMappingsParse)
		}
		out[i] = c
	}
	return out
}()

// seriesIndex holds a scrape's values by sample name.
type seriesIndex map[string][]seriesValue

type seriesValue struct {
	labels []*dto.LabelPair
	value  float64
	hist   *dto.Histogram // a histogram's _sum carries its buckets (fieldHistogram)
}

// indexFamilies flattens metric families into sample names. A counter is
// found with and without its _total suffix (the text format names the
// family with it, OpenMetrics without); summaries and histograms give
// their _sum and _count.
func indexFamilies(fams []*dto.MetricFamily) seriesIndex {
	idx := make(seriesIndex)
	add := func(name string, m *dto.Metric, v float64) {
		if !math.IsNaN(v) {
			idx[name] = append(idx[name], seriesValue{labels: m.GetLabel(), value: v})
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
				if v := m.GetHistogram().GetSampleSum(); !math.IsNaN(v) {
					idx[name+"_sum"] = append(idx[name+"_sum"], seriesValue{labels: m.GetLabel(), value: v, hist: m.GetHistogram()})
				}
				add(name+"_count", m, float64(m.GetHistogram().GetSampleCount()))
			}
		}
	}
	return idx
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
func (idx seriesIndex) detect() *compiled {
	for _, m := range builtinCompiled {
		if _, ok := idx.fieldValue(m.acquired, nil, ""); ok {
			return m
		}
		if _, ok := idx.fieldValue(m.max, nil, ""); ok {
			return m
		}
	}
	return nil
}

// read applies m; ok is false when the scrape has neither its acquired
// nor its max series.
func (idx seriesIndex) read(m *compiled) (s rundir.AppPoolSample, ok bool) {
	get := func(f field) (float64, bool) { return idx.fieldValue(f, m.Labels, m.Pool) }
	var okAcq, okMax, okTotal bool
	s.Acquired, okAcq = get(m.acquired)
	s.Max, okMax = get(m.max)
	if !okAcq && !okMax {
		return s, false
	}
	s.Idle, _ = get(m.idle)
	if s.Total, okTotal = get(m.total); !okTotal {
		s.Total = s.Acquired + s.Idle
	}
	s.AcquireWaitsTotal, _ = get(m.waits)
	s.AcquireWaitSecondsTotal, _ = get(m.waitSeconds)
	s.CanceledAcquiresTotal, _ = get(m.canceled)
	s.UnclosedSessions, _ = get(m.unclosed)
	s.Waiting, _ = get(m.waiting)
	s.UseSecondsTotal, _ = get(m.useSeconds)
	s.UsesTotal, _ = get(m.uses)
	s.UseHistogram = idx.fieldHistogram(m.useSeconds, m.Labels, m.Pool)
	s.WaitHistogram = idx.fieldHistogram(m.waitSeconds, m.Labels, m.Pool)
	s.Mapping = m.Name
	s.Targets = 1
	return s, true
}

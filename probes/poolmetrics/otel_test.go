package poolmetrics

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"
)

// otelExport is how one Prometheus exporter names OpenTelemetry's
// connection-pool instruments: the metric names' stem
// (db_client_connection or, up to semantic conventions v1.24,
// db_client_connections), the count's name, the state and pool labels,
// and the unit suffix of the time histograms ("_seconds",
// "_milliseconds" or "").
type otelExport struct {
	stem, count, stateLabel, poolLabel, timeUnit string
}

// otelRegistry registers, with client_golang, two pools exported under e's
// names — main: 3 used, 2 idle of 10, 1 pending, 2 timeouts; replica: 1
// used, 4 idle of 5 — with waits of 0.5 s and 1.5 s and uses of 0.25 s,
// 0.5 s and 2.25 s in main and one use of 1 s in replica, observed in
// the unit the names say.
func otelRegistry(t *testing.T, e otelExport) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	scale := 1.0
	if e.timeUnit == "_milliseconds" || (e.timeUnit == "" && e.stem == "db_client_connections") {
		scale = 1000
	}
	count := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: e.count, Help: "connections by state"}, []string{e.poolLabel, e.stateLabel})
	maxConns := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: e.stem + "_max", Help: "max"}, []string{e.poolLabel})
	pending := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: e.stem + "_pending_requests", Help: "pending"}, []string{e.poolLabel})
	timeouts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: e.stem + "_timeouts_total", Help: "timeouts"}, []string{e.poolLabel})
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: e.stem + "_wait_time" + e.timeUnit, Help: "wait"}, []string{e.poolLabel})
	use := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: e.stem + "_use_time" + e.timeUnit, Help: "use"}, []string{e.poolLabel})
	reg.MustRegister(count, maxConns, pending, timeouts, wait, use)
	count.WithLabelValues("main", "used").Set(3)
	count.WithLabelValues("main", "idle").Set(2)
	count.WithLabelValues("replica", "used").Set(1)
	count.WithLabelValues("replica", "idle").Set(4)
	maxConns.WithLabelValues("main").Set(10)
	maxConns.WithLabelValues("replica").Set(5)
	pending.WithLabelValues("main").Set(1)
	pending.WithLabelValues("replica").Set(0)
	timeouts.WithLabelValues("main").Add(2)
	for _, s := range []float64{0.5, 1.5} {
		wait.WithLabelValues("main").Observe(s * scale)
	}
	for _, s := range []float64{0.25, 0.5, 2.25} {
		use.WithLabelValues("main").Observe(s * scale)
	}
	use.WithLabelValues("replica").Observe(1 * scale)
	return reg
}

// TestScrapeOpenTelemetry: a service exporting OpenTelemetry's pool
// metrics, as real exporters name them, is read with no mapping named —
// the conventions' current names and their v1.24 names (what
// opentelemetry-instrumentation-sqlalchemy exports), with or without a
// unit suffix, times in seconds or milliseconds, in the text format and in
// OpenMetrics — and a mapping based on them picks one pool by its name.
func TestScrapeOpenTelemetry(t *testing.T) {
	defer goleak.VerifyNone(t)
	current := otelExport{"db_client_connection", "db_client_connection_count", "state", "pool_name", "_seconds"}
	both := rundir.AppPoolSample{Acquired: 4, Idle: 6, Total: 10, Max: 15, AcquireWaitSecondsTotal: 2, CanceledAcquiresTotal: 2,
		Waiting: 1, UseSecondsTotal: 4, UsesTotal: 4, Mapping: "otel", Targets: 1}
	legacy := both
	legacy.Mapping = "otel_legacy"
	main := rundir.AppPoolSample{Acquired: 3, Idle: 2, Total: 5, Max: 10, AcquireWaitSecondsTotal: 2, CanceledAcquiresTotal: 2,
		Waiting: 1, UseSecondsTotal: 3, UsesTotal: 3, Mapping: "main", Targets: 1}
	cases := []struct {
		name     string
		export   otelExport
		open     bool // serve OpenMetrics
		mapping  string
		mappings map[string]Mapping
		want     rundir.AppPoolSample
	}{
		{name: "current names, state label, seconds", export: current, want: both},
		{name: "current names, OpenMetrics", export: current, open: true, want: both},
		{name: "db_client_connection_state and _pool_name labels, milliseconds",
			export: otelExport{"db_client_connection", "db_client_connection_count", "db_client_connection_state", "db_client_connection_pool_name", "_milliseconds"}, want: both},
		{name: "no unit suffix (seconds by the current conventions)",
			export: otelExport{"db_client_connection", "db_client_connection_count", "db_client_connection_state", "db_client_connection_pool_name", ""}, want: both},
		{name: "v1.24 names of opentelemetry-instrumentation-sqlalchemy",
			export: otelExport{"db_client_connections", "db_client_connections_usage", "state", "pool_name", "_milliseconds"}, want: legacy},
		{name: "v1.24 names, no unit suffix (milliseconds by those conventions)",
			export: otelExport{"db_client_connections", "db_client_connections_usage", "state", "pool_name", ""}, want: legacy},
		{name: "v1.24 names, the usage counter with its unit appended",
			export: otelExport{"db_client_connections", "db_client_connections_usage_connections", "state", "pool_name", "_milliseconds"}, want: legacy},
		{name: "one pool by name, based on the built-in mapping", export: current,
			mapping: "main", mappings: map[string]Mapping{"main": {Base: "otel", Pool: "main"}}, want: main},
		{name: "one pool by name, the current pool label", open: true,
			export:  otelExport{"db_client_connection", "db_client_connection_count", "db_client_connection_state", "db_client_connection_pool_name", "_seconds"},
			mapping: "main", mappings: map[string]Mapping{"main": {Base: "otel", Pool: "main"}}, want: main},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := otelRegistry(t, c.export)
			var h http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
			if c.open {
				h = openMetricsOnly(reg)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			s, err := NewScraper([]Target{{URL: srv.URL + "/metrics", Mapping: c.mapping}}, c.mappings, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.scrape(context.Background(), s.targets[0])
			if err != nil {
				t.Fatalf("scrape: %v", err)
			}
			// Milliseconds become seconds by a multiplication: compare
			// the times to a nanosecond.
			for _, p := range []*float64{&got.AcquireWaitSecondsTotal, &got.UseSecondsTotal} {
				*p = math.Round(*p*1e9) / 1e9
			}
			checkOTelHistograms(t, got, c.export, c.want.Mapping == "main")
			got.UseHistogram, got.WaitHistogram = nil, nil
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestMappingFields: selectors parse as the text format writes them; a
// bad one, or a base that does not exist, is refused by name.
func TestMappingFields(t *testing.T) {
	f, err := parseField(`a_total | b{x="1|2",y="q\"uote"} | c_milliseconds_sum`)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 3 || f[0].name != "a_total" || f[1].labels["x"] != "1|2" || f[1].labels["y"] != `q"uote` || f[2].scale != 0.001 || f[0].scale != 1 {
		t.Errorf("parsed %+v", f)
	}
	for _, c := range []struct {
		mappings map[string]Mapping
		want     string
	}{
		{map[string]Mapping{"m": {Acquired: `pool{state="used"`}}, `pool mapping "m", acquired: series "pool{state=\"used\""`},
		{map[string]Mapping{"m": {Acquired: "a | ", Max: "b"}}, "an empty alternative"},
		{map[string]Mapping{"m": {Base: "c3p0", Pool: "x"}}, `pool mapping "m": unknown base "c3p0"`},
		{map[string]Mapping{"m": {Pool: "x"}}, `mapping "m" names neither an acquired nor a max series`},
	} {
		if err := Check(nil, c.mappings); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%+v): %v, want an error containing %q", c.mappings, err, c.want)
		}
	}
}

// TestBuiltinMappingsParse: every built-in mapping compiles (a package
// variable panics otherwise) and names an acquired or a max series.
func TestBuiltinMappingsParse(t *testing.T) {
	for i, c := range builtinCompiled {
		if c.Name != builtinMappings[i].Name || (len(c.acquired) == 0 && len(c.max) == 0) {
			t.Errorf("built-in %q: %d acquired and %d max selectors", c.Name, len(c.acquired), len(c.max))
		}
	}
}

// checkOTelHistograms: the use-time and wait-time buckets come with the
// scrape, in seconds. client_golang's default buckets (5 ms to 10 s) in
// seconds hold the uses 0.25, 0.5, 2.25 (and 1 in replica) s: p50 rank 2
// at the top of (0.25, 0.5]; p95 rank 3.8 in (1, 2.5], 0.8 of its one
// use: 1 + 1.5·0.8 = 2.2. In main alone: p50 rank 1.5 in (0.25, 0.5]
// holding 1: 0.375; p95 rank 2.85 in (1, 2.5]: 1 + 1.5·0.85. The waits
// 0.5 and 1.5 s: p50 rank 1 at the top of (0.25, 0.5]. The same buckets
// observed in milliseconds end at 10 ms: everything is beyond, and the
// p95 is at least 0.01 s.
func checkOTelHistograms(t *testing.T, got rundir.AppPoolSample, e otelExport, mainOnly bool) {
	t.Helper()
	use, _ := Quantile(0.95, got.UseHistogram)
	wait, ok := Quantile(0.5, got.WaitHistogram)
	if !ok {
		t.Fatalf("no wait-time buckets read: %+v", got.WaitHistogram)
	}
	ms := e.timeUnit == "_milliseconds" || (e.timeUnit == "" && e.stem == "db_client_connections")
	switch {
	case ms:
		if !use.AtLeast || !near(use.Seconds, 0.01) {
			t.Errorf("p95 use %+v; want at least 0.01 s", use)
		}
	case mainOnly:
		p50, _ := Quantile(0.5, got.UseHistogram)
		if use.AtLeast || !near(use.Seconds, 1+1.5*0.85) || !near(p50.Seconds, 0.375) || got.UseHistogram.Count != 3 {
			t.Errorf("main: p50 %+v, p95 use %+v of %g; want 0.375, %g of 3", p50, use, got.UseHistogram.Count, 1+1.5*0.85)
		}
	default:
		if use.AtLeast || !near(use.Seconds, 2.2) || got.UseHistogram.Count != 4 {
			t.Errorf("p95 use %+v of %g; want 2.2 of 4", use, got.UseHistogram.Count)
		}
		if !near(wait.Seconds, 0.5) {
			t.Errorf("p50 wait %+v; want 0.5", wait)
		}
	}
}

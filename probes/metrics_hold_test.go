package probes

import (
	"math"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	dto "github.com/prometheus/client_model/go"
)

// gathered is the value of the probe's metric name (with the label
// application=app when app is not empty); NaN when it is not exported.
func gathered(t *testing.T, m *probeMetrics, name, app string) float64 {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mt := range mf.GetMetric() {
			if app != "" && !hasLabel(mt, "application", app) {
				continue
			}
			if c := mt.GetCounter(); c != nil {
				return c.GetValue()
			}
			return mt.GetGauge().GetValue()
		}
	}
	return math.NaN()
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestMetricsHoldSources: /metrics carries each application's share of
// the busy backend-seconds Little's law counts (summing to the whole),
// and the service pool's own use and wait time as the increase of its
// counters — a restart of the service counted from its new totals.
func TestMetricsHoldSources(t *testing.T) {
	m := newProbeMetrics()
	var a littleAcc
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pool := []rundir.AppPoolSample{
		{UseSecondsTotal: 100, UsesTotal: 1000, AcquireWaitSecondsTotal: 2, AcquireWaitsTotal: 10},
		{UseSecondsTotal: 104, UsesTotal: 1040, AcquireWaitSecondsTotal: 2.5, AcquireWaitsTotal: 12},
		{UseSecondsTotal: 3, UsesTotal: 30, AcquireWaitSecondsTotal: 0.25, AcquireWaitsTotal: 1}, // restarted
	}
	for i := range 31 { // 30 windows of a second, ten samples each
		for j := range 10 {
			if i == 0 && j > 0 {
				break
			}
			s := &rundir.Sample{Time: t0.Add(time.Duration(10*i+j) * 100 * time.Millisecond), States: rundir.StateCounts{Active: 3, Idle: 2},
				Apps: []rundir.AppConns{{Name: "svc", StateCounts: rundir.StateCounts{Active: 2, Idle: 2}}, {Name: "batch", StateCounts: rundir.StateCounts{Active: 1}}}}
			if i > 0 && j == 0 {
				s.Database = &rundir.DatabaseSample{XactCommit: 30}
			}
			if j == 0 && i%10 == 0 && i/10 < len(pool) {
				s.AppPool = &pool[i/10]
			}
			busy, xacts := a.busySecs, a.out.Xacts
			a.add(s)
			m.sample(s)
			m.little(&a, busy, xacts)
		}
	}
	total := gathered(t, m, "leakbench_probe_busy_backend_seconds_total", "")
	svc, batch := gathered(t, m, "leakbench_probe_application_busy_backend_seconds_total", "svc"), gathered(t, m, "leakbench_probe_application_busy_backend_seconds_total", "batch")
	if math.Abs(svc-2*total/3) > 1e-9 || math.Abs(batch-total/3) > 1e-9 || total <= 0 {
		t.Errorf("busy backend-seconds: all %g, svc %g, batch %g; want svc two thirds, batch one third", total, svc, batch)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"leakbench_probe_app_pool_use_seconds_total", 4 + 3},
		{"leakbench_probe_app_pool_uses_total", 40 + 30},
		{"leakbench_probe_app_pool_acquire_wait_seconds_total", 0.5 + 0.25},
		{"leakbench_probe_app_pool_acquire_waits_total", 2 + 1},
	} {
		if got := gathered(t, m, tc.name, ""); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s %g, want %g", tc.name, got, tc.want)
		}
	}
}

// TestMetricsPoolQuantiles: /metrics carries the p50 and p95 of the
// service pool's use time from its histogram's increase, marked an
// estimate or a lower bound, and no series at all without buckets.
func TestMetricsPoolQuantiles(t *testing.T) {
	quantile := func(m *probeMetrics, q, bound string) float64 {
		for _, mf := range must(m.reg.Gather()) {
			if mf.GetName() != "leakbench_probe_app_pool_use_time_quantile_seconds" {
				continue
			}
			for _, mt := range mf.GetMetric() {
				if hasLabel(mt, "quantile", q) && hasLabel(mt, "bound", bound) {
					return mt.GetGauge().GetValue()
				}
			}
		}
		return math.NaN()
	}
	hist := func(c ...float64) *rundir.Histogram {
		return &rundir.Histogram{UpperBounds: []float64{0.1, 1}, Cumulative: c[:2], Count: c[2]}
	}
	m := newProbeMetrics()
	// Increase 10, 18 of 20: p50 rank 10 at the top of (0, 0.1]; p95
	// rank 19 beyond 1 s, the highest bound.
	for _, h := range []*rundir.Histogram{hist(50, 90, 100), hist(60, 108, 120)} {
		m.sample(&rundir.Sample{AppPool: &rundir.AppPoolSample{UseHistogram: h}})
	}
	if p50, p95 := quantile(m, "0.5", "estimate"), quantile(m, "0.95", "at_least"); math.Abs(p50-0.1) > 1e-9 || p95 != 1 {
		t.Errorf("p50 %g, p95 at least %g; want 0.1, 1", p50, p95)
	}
	if v := quantile(m, "0.95", "estimate"); !math.IsNaN(v) {
		t.Errorf("p95 exported as an estimate too: %g", v)
	}
	none := newProbeMetrics()
	for range 2 {
		none.sample(&rundir.Sample{AppPool: &rundir.AppPoolSample{UseSecondsTotal: 1, UsesTotal: 2}})
	}
	if v := quantile(none, "0.5", "estimate"); !math.IsNaN(v) {
		t.Errorf("no buckets, yet a p50 of %g", v)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

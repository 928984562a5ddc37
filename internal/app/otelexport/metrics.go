package otelexport

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// metricsExport holds the run's key figures as gauges, exported once per
// run (ForceFlush) rather than on a timer.
type metricsExport struct {
	mp                                          *sdkmetric.MeterProvider
	stuckMax, leaked, releaseP99, errRate, reqs metric.Float64Gauge
}

// The gauges, by name; each has the run's name, profile and variant as
// attributes.
const (
	MetricStuckMax   = "leakbench.stuck.max"   // most sessions stuck idle in transaction at one sample
	MetricLeaked     = "leakbench.leaked"      // stuck sessions nobody released (timeout, terminated, open at end)
	MetricReleaseP99 = "leakbench.release.p99" // release latency's 99th percentile, seconds
	MetricErrorRate  = "leakbench.error_rate"  // failed requests / requests sent
	MetricRequests   = "leakbench.requests"    // requests sent
)

func startMetrics(ctx context.Context, cfg Config, res *resource.Resource) (*metricsExport, error) {
	var opts []otlpmetrichttp.Option
	if cfg.Endpoint != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(signalURL(cfg.Endpoint, "/v1/metrics")))
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("set up the OTLP metric exporter: %w", err)
	}
	// The interval is longer than any run: RunWritten flushes.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(24*time.Hour))))
	m := mp.Meter("github.com/leakbench/leakbench")
	me := &metricsExport{mp: mp}
	for _, g := range []struct {
		dst        *metric.Float64Gauge
		name, unit string
		desc       string
	}{
		{&me.stuckMax, MetricStuckMax, "{session}", "most sessions stuck idle in transaction at one sample"},
		{&me.leaked, MetricLeaked, "{session}", "stuck sessions nobody released: killed by the timeout, terminated, or open at the end"},
		{&me.releaseP99, MetricReleaseP99, "s", "99th percentile of the release latency (idle-in-transaction episodes' length)"},
		{&me.errRate, MetricErrorRate, "1", "failed requests over requests sent"},
		{&me.reqs, MetricRequests, "{request}", "requests the engine sent"},
	} {
		if *g.dst, err = m.Float64Gauge(g.name, metric.WithUnit(g.unit), metric.WithDescription(g.desc)); err != nil {
			_ = mp.Shutdown(ctx)
			return nil, fmt.Errorf("create gauge %s: %w", g.name, err)
		}
	}
	return me, nil
}

// record sets the gauges from sum and exports them; the error is the
// export's.
func (me *metricsExport) record(ctx context.Context, sum *rundir.Summary, timeout time.Duration) error {
	set := metric.WithAttributeSet(attribute.NewSet(attribute.String("leakbench.run", sum.Name),
		attribute.String("leakbench.profile", sum.Profile), attribute.String("leakbench.variant", sum.Environment.Variant)))
	if p := sum.Probe; p != nil {
		me.stuckMax.Record(ctx, float64(p.MaxStuckIdleInTx), set)
		me.releaseP99.Record(ctx, p.ReleaseP99Seconds, set)
		leaked := p.TimeoutTerminated
		if f := sum.Forensics; f != nil {
			leaked = f.Leaked
		}
		me.leaked.Record(ctx, float64(leaked), set)
	}
	if l := sum.Load; l != nil {
		me.reqs.Record(ctx, float64(l.Requests), set)
		rate := 0.0
		if l.Requests > 0 {
			rate = float64(l.Failures) / float64(l.Requests)
		}
		me.errRate.Record(ctx, rate, set)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	return me.mp.ForceFlush(ctx)
}

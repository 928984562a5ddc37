package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// probeMetrics are the probe's own metrics, in a registry of their own so
// that nothing else in the process leaks into them.
type probeMetrics struct {
	reg            *prometheus.Registry
	samples        prometheus.Counter
	gaps           prometheus.Counter
	sampleDuration prometheus.Histogram
	backends       *prometheus.GaugeVec
	byState        [5]prometheus.Gauge // backends' children, in StateCounts' order
	stuck          prometheus.Gauge
	oldest         prometheus.Gauge
	episodes       *prometheus.CounterVec
	release        prometheus.Histogram
	clWaiting      prometheus.Gauge
	maxWait        prometheus.Gauge
	appAcquired    prometheus.Gauge
	appMax         prometheus.Gauge
	// appBackends is the database's view of each service's pool; reset
	// every sample, so an application that left drops out.
	appBackends *prometheus.GaugeVec
	// Little's law's two sides as counters, over the windows the hold
	// counts (hold.go): a rate of one over a rate of the other is the
	// hold over any range; holdMean is the run's so far.
	busySeconds prometheus.Counter
	xacts       prometheus.Counter
	holdMean    prometheus.Gauge
	// appBusySeconds is each application's share of busySeconds: the
	// database counts transactions per database, not per application, so
	// there is no hold per application to export, only its busy time.
	appBusySeconds *prometheus.CounterVec
	appBusyBefore  map[appKey]float64
	// The service pool's own time, from its metrics: the increase of its
	// counters since the probe started (a restart: its new total).
	appUseSeconds, appUses, appWaitSeconds, appWaits prometheus.Counter
	prevAppPool                                      *rundir.AppPoolSample
	// appUseQuantiles and appWaitQuantiles: the p50 and p95 the service
	// pool's histograms give since the probe started (as summary.json's);
	// vectors, so that a service without buckets exports no series rather
	// than a 0 nobody measured.
	appUseQuantiles, appWaitQuantiles *prometheus.GaugeVec
	appUseHist, appWaitHist           poolmetrics.HistogramRun
}

// releaseBuckets span healthy code (milliseconds) to the incident's
// 120 s timeout.
var releaseBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// stateNames label the states in StateCounts' order.
var stateNames = [5]string{stateActive, stateIdle, stateIdleInTx, stateIdleInTxAborted, "other"}

func newProbeMetrics() *probeMetrics {
	const ns = "leakbench_probe"
	m := &probeMetrics{
		reg: prometheus.NewRegistry(),
		samples: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "samples_total",
			Help: "Samples taken."}),
		gaps: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "gaps_total",
			Help: "Samples whose PostgreSQL read failed."}),
		sampleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "sample_duration_seconds",
			Help: "Time one sample took to read, all sources.", Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}}),
		backends: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "backends",
			Help: "Client backends of the watched database by pg_stat_activity state."}, []string{"state"}),
		stuck: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "stuck_idle_in_transaction_sessions",
			Help: "Backends idle in transaction for the stuck threshold or longer."}),
		oldest: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "oldest_idle_in_transaction_seconds",
			Help: "Age of the oldest idle-in-transaction episode."}),
		episodes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "episodes_total",
			Help: "Finished idle-in-transaction episodes by how they ended (released, timeout, terminated, open_at_end)."}, []string{"end_reason"}),
		release: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "release_latency_seconds",
			Help: "Length of idle-in-transaction episodes: how long a session held its connection idle before releasing it.", Buckets: releaseBuckets}),
		clWaiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "pgbouncer_clients_waiting",
			Help: "PgBouncer clients waiting for a server connection (cl_waiting)."}),
		maxWait: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "pgbouncer_max_wait_seconds",
			Help: "Longest current wait of a PgBouncer client (maxwait + maxwait_us)."}),
		appAcquired: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "app_pool_acquired_connections",
			Help: "Connections checked out of the service's own pool, as last scraped."}),
		appMax: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "app_pool_max_connections",
			Help: "Size limit of the service's own pool, as last scraped."}),
		appBackends: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "application_backends",
			Help: "Client backends of the watched database by application (application_name, else client address) and pg_stat_activity state: each service's pool as the database sees it."},
			[]string{"application", "state"}),
		busySeconds: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "busy_backend_seconds_total",
			Help: "Backend-seconds the watched database's client backends spent in a transaction (active or idle in one), over the windows between reads of pg_stat_database that the hold counts: L·t of Little's law."}),
		xacts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "transactions_total",
			Help: "Transactions that ended in those windows (xact_commit + xact_rollback, the probe's own taken out): λ·t. rate(busy_backend_seconds_total) / rate(transactions_total) is the mean hold per transaction."}),
		holdMean: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "hold_seconds",
			Help: "Mean time a transaction held its connection since the probe started, by Little's law on pg_stat_database (summary.json probe.hold.mean_seconds); 0 until a transaction was counted."}),
	}
	m.appBusySeconds = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "application_busy_backend_seconds_total",
		Help: "Each application's share of busy_backend_seconds_total (pg_stat_activity, by application_name, else client address). No hold per application: pg_stat_database counts transactions per database."},
		[]string{"application"})
	m.appUseSeconds = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "app_pool_use_seconds_total",
		Help: "Seconds the service's own pool had connections checked out, from its metrics (use_time, e.g. db.client.connection.use_time), since the probe started."})
	m.appUses = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "app_pool_uses_total",
		Help: "Checkouts of the service's own pool, from its metrics (use_time's count), since the probe started: app_pool_use_seconds_total over it is the pool's own hold per checkout."})
	m.appWaitSeconds = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "app_pool_acquire_wait_seconds_total",
		Help: "Seconds acquires waited for a connection of the service's own pool, from its metrics, since the probe started."})
	m.appWaits = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "app_pool_acquire_waits_total",
		Help: "Acquires of the service's own pool that had to wait, from its metrics, since the probe started."})
	quantileHelp := " since the probe started, estimated from the increase of its histogram's buckets by linear interpolation within the bucket, as histogram_quantile does (summary.json %s). bound=\"at_least\": beyond the highest finite bucket, whose bound this is."
	m.appUseQuantiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "app_pool_use_time_quantile_seconds",
		Help: "Percentiles of how long the service's own pool's checkouts held their connection (its use_time histogram)" + fmt.Sprintf(quantileHelp, "probe.app_pool_use_quantiles")},
		[]string{"quantile", "bound"})
	m.appWaitQuantiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "app_pool_wait_time_quantile_seconds",
		Help: "Percentiles of how long acquires of the service's own pool waited (its wait_time histogram)" + fmt.Sprintf(quantileHelp, "probe.app_pool_wait_quantiles")},
		[]string{"quantile", "bound"})
	m.reg.MustRegister(m.appUseQuantiles, m.appWaitQuantiles)
	m.reg.MustRegister(m.samples, m.gaps, m.sampleDuration, m.backends, m.stuck, m.oldest, m.episodes, m.release,
		m.clWaiting, m.maxWait, m.appAcquired, m.appMax, m.appBackends, m.busySeconds, m.xacts, m.holdMean,
		m.appBusySeconds, m.appUseSeconds, m.appUses, m.appWaitSeconds, m.appWaits)
	for i, state := range stateNames {
		m.byState[i] = m.backends.WithLabelValues(state)
	}
	for _, r := range []string{rundir.EndReleased, rundir.EndTimeout, rundir.EndTerminated, rundir.EndOpenAtEnd} {
		m.episodes.WithLabelValues(r) // export zeros from the start
	}
	return m
}

func (m *probeMetrics) sample(s *rundir.Sample) {
	m.samples.Inc()
	m.sampleDuration.Observe(s.TookSeconds)
	if s.Gap {
		m.gaps.Inc()
	} else {
		c := s.States
		for i, n := range [5]int{c.Active, c.Idle, c.IdleInTx, c.IdleInTxAborted, c.Other} {
			m.byState[i].Set(float64(n))
		}
		m.stuck.Set(float64(s.StuckIdleInTx))
		m.oldest.Set(s.OldestIdleInTxSeconds)
		m.appBackends.Reset()
		for _, a := range s.Apps {
			for i, n := range [5]int{a.Active, a.Idle, a.IdleInTx, a.IdleInTxAborted, a.Other} {
				m.appBackends.WithLabelValues(a.Name, stateNames[i]).Set(float64(n))
			}
		}
	}
	if p := s.PgBouncer; p != nil {
		m.clWaiting.Set(float64(p.ClWaiting))
		m.maxWait.Set(p.MaxWaitSeconds)
	}
	if a := s.AppPool; a != nil {
		m.appAcquired.Set(a.Acquired)
		m.appMax.Set(a.Max)
		m.appPoolTimes(a)
	}
}

// appPoolTimes adds the increase of the service pool's time counters
// since the previous scrape.
func (m *probeMetrics) appPoolTimes(a *rundir.AppPoolSample) {
	if p := m.prevAppPool; p != nil {
		for _, c := range []struct {
			to        prometheus.Counter
			was, next float64
		}{
			{m.appUseSeconds, p.UseSecondsTotal, a.UseSecondsTotal},
			{m.appUses, p.UsesTotal, a.UsesTotal},
			{m.appWaitSeconds, p.AcquireWaitSecondsTotal, a.AcquireWaitSecondsTotal},
			{m.appWaits, p.AcquireWaitsTotal, a.AcquireWaitsTotal},
		} {
			d := c.next - c.was
			if d < 0 { // the service restarted: its counters began again
				d = c.next
			}
			c.to.Add(d)
		}
	}
	m.appUseHist.Add(a.UseHistogram)
	m.appWaitHist.Add(a.WaitHistogram)
	setQuantiles(m.appUseQuantiles, m.appUseHist.Increase())
	setQuantiles(m.appWaitQuantiles, m.appWaitHist.Increase())
	c := *a
	c.UseHistogram, c.WaitHistogram = nil, nil // kept by the HistogramRuns
	m.prevAppPool = &c
}

// setQuantiles exports h's p50 and p95, each marked an estimate or a
// lower bound; nothing when h counted nothing.
func setQuantiles(v *prometheus.GaugeVec, h *rundir.Histogram) {
	v.Reset() // a percentile that moved from one bound to the other leaves no stale series
	for _, q := range []struct {
		label string
		q     float64
	}{{"0.5", 0.5}, {"0.95", 0.95}} {
		e, ok := poolmetrics.Quantile(q.q, h)
		if !ok {
			return
		}
		bound := "estimate"
		if e.AtLeast {
			bound = "at_least"
		}
		v.WithLabelValues(q.label, bound).Set(e.Seconds)
	}
}

// little sets the hold's counters to what a has counted so far.
func (m *probeMetrics) little(a *littleAcc, busyBefore float64, xactsBefore int64) {
	if d := a.busySecs - busyBefore; d > 0 {
		m.busySeconds.Add(d)
	}
	if d := a.out.Xacts - xactsBefore; d > 0 {
		m.xacts.Add(float64(d))
	}
	if a.out.Xacts > 0 {
		m.holdMean.Set(a.busySecs / float64(a.out.Xacts))
	}
	for k, v := range a.appSecs {
		if d := v - m.appBusyBefore[k]; d > 0 {
			m.appBusySeconds.WithLabelValues(k.name).Add(d)
		}
		if m.appBusyBefore == nil {
			m.appBusyBefore = map[appKey]float64{}
		}
		m.appBusyBefore[k] = v
	}
}

func (m *probeMetrics) episode(e rundir.Episode) {
	m.episodes.WithLabelValues(e.EndReason).Inc()
	m.release.Observe(e.HoldSeconds)
}

// metricsServer serves /metrics.
type metricsServer struct {
	srv    *http.Server
	ln     net.Listener
	served chan error
}

func serveMetrics(addr string, reg *prometheus.Registry) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: serve probe metrics on %s: %w", ErrConfig, addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	s := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln, served: make(chan error, 1)}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

func (s *metricsServer) url() string { return "http://" + s.ln.Addr().String() + "/metrics" }

func (s *metricsServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("stop probe metrics server: %w", err)
	}
	return nil
}

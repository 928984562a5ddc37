package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

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
	}
	m.reg.MustRegister(m.samples, m.gaps, m.sampleDuration, m.backends, m.stuck, m.oldest, m.episodes, m.release,
		m.clWaiting, m.maxWait, m.appAcquired, m.appMax, m.appBackends)
	for i, state := range stateNames {
		m.byState[i] = m.backends.WithLabelValues(state)
	}
	for _, r := range []string{EndReleased, EndTimeout, EndTerminated, EndOpenAtEnd} {
		m.episodes.WithLabelValues(r) // export zeros from the start
	}
	return m
}

func (m *probeMetrics) sample(s *Sample) {
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
	}
}

func (m *probeMetrics) episode(e Episode) {
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

// Package live serves the metrics of a running load to Prometheus at
// /metrics: read from a snapshot of the engine's own counters and
// histograms at each scrape, so nothing is added to the request path.
// Names are the threshold metrics' with a leakbench_ prefix; durations
// are in seconds, as Prometheus wants; latency histograms are summaries
// with the p50, p90, p95 and p99 quantiles.
package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Series is one series of the engine's: an MCP method (and tool or prompt
// name), an http step, or a scenario's iterations.
type Series struct {
	Scenario string
	Kind     SeriesKind
	// Method and Name: the MCP method and the tool or prompt name; for an
	// http step its HTTP method and name, and Status the answer's status
	// (0: none came).
	Method, Name string
	Status       int
	Requests     int64
	Aborted      int64
	// Failures counts the failed requests by error kind (aborted and
	// canceled included); kinds that did not occur may be left out.
	Failures map[string]int64
	// Hist holds the answered requests' (or iterations') latencies, µs.
	Hist *hdrhistogram.Histogram
}

// SeriesKind says what a Series counts.
type SeriesKind int

// Series kinds.
const (
	KindMCP SeriesKind = iota
	KindHTTP
	KindIteration
)

// Scenario is one scenario's gauges and counters.
type Scenario struct {
	Name                string
	Iterations, Dropped int64
	VUs, VUsMax         int64
	// Features are its 2026-07-28 feature counts (nil: none used).
	Features *rundir.FeatureStats
}

// Snapshot is what a scrape reports.
type Snapshot struct {
	Series    []Series
	Scenarios []Scenario
	// Generator is the generator's self-check (nil: no second measured
	// yet).
	Generator *Generator
}

var (
	promSeries = []string{"scenario", "method", "name"}
	descReqs   = prometheus.NewDesc("leakbench_mcp_reqs_total",
		"MCP requests sent.", promSeries, nil)
	descFailed = prometheus.NewDesc("leakbench_mcp_req_failures_total",
		"MCP requests that failed, by kind (aborted and canceled included).", append(promSeries[:3:3], "kind"), nil)
	descAborted = prometheus.NewDesc("leakbench_mcp_req_aborted_total",
		"MCP requests the scenario gave up on (abortAfter).", promSeries, nil)
	descDuration = prometheus.NewDesc("leakbench_mcp_req_duration_seconds",
		"Latency of answered MCP requests (arrival-rate scenarios: from the intended start).", promSeries, nil)
	descIterations = prometheus.NewDesc("leakbench_iterations_total",
		"Completed iterations.", []string{"scenario"}, nil)
	descIterDuration = prometheus.NewDesc("leakbench_iteration_duration_seconds",
		"Duration of completed iterations.", []string{"scenario"}, nil)
	descDropped = prometheus.NewDesc("leakbench_dropped_iterations_total",
		"Iterations an arrival-rate executor dropped for want of a free user.", []string{"scenario"}, nil)
	descVUs = prometheus.NewDesc("leakbench_vus",
		"Active virtual users.", []string{"scenario"}, nil)
	descVUsMax = prometheus.NewDesc("leakbench_vus_max",
		"Most virtual users active at once so far.", []string{"scenario"}, nil)

	// http steps, by "METHOD name" split as k6 tags them, and the answer's
	// status ("0": none came).
	httpSeries   = []string{"scenario", "method", "name", "status"}
	descHTTPReqs = prometheus.NewDesc("leakbench_http_reqs_total",
		"HTTP requests the http steps sent.", httpSeries, nil)
	descHTTPFailed = prometheus.NewDesc("leakbench_http_req_failures_total",
		"HTTP requests of http steps that failed, by kind (a status not expected is http_4xx or http_5xx).", append(httpSeries[:4:4], "kind"), nil)
	descHTTPDuration = prometheus.NewDesc("leakbench_http_req_duration_seconds",
		"Latency of answered http steps.", httpSeries, nil)
)

var quantiles = []float64{0.5, 0.9, 0.95, 0.99}

// collector exposes the snapshots to Prometheus.
type collector struct{ snap func() Snapshot }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReqs, descFailed, descAborted, descDuration,
		descIterations, descIterDuration, descDropped, descVUs, descVUsMax,
		descHTTPReqs, descHTTPFailed, descHTTPDuration} {
		ch <- d
	}
	for _, d := range featureDescs {
		ch <- d
	}
	for _, d := range generatorDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.snap()
	for _, g := range s.Series {
		if g.Kind == KindIteration {
			ch <- summary(descIterDuration, g.Hist, g.Scenario)
			continue
		}
		reqs, failed, duration := descReqs, descFailed, descDuration
		labels := []string{g.Scenario, g.Method, g.Name}
		if g.Kind == KindHTTP {
			// Not MCP requests: series of their own (summary.json's load.http).
			reqs, failed, duration = descHTTPReqs, descHTTPFailed, descHTTPDuration
			labels = append(labels, strconv.Itoa(g.Status))
		} else {
			ch <- prometheus.MustNewConstMetric(descAborted, prometheus.CounterValue, float64(g.Aborted), labels...)
		}
		ch <- prometheus.MustNewConstMetric(reqs, prometheus.CounterValue, float64(g.Requests), labels...)
		for kind, n := range g.Failures {
			if n > 0 {
				ch <- prometheus.MustNewConstMetric(failed, prometheus.CounterValue, float64(n), append(labels, kind)...)
			}
		}
		ch <- summary(duration, g.Hist, labels...)
	}
	for _, sc := range s.Scenarios {
		ch <- prometheus.MustNewConstMetric(descIterations, prometheus.CounterValue, float64(sc.Iterations), sc.Name)
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(sc.Dropped), sc.Name)
		ch <- prometheus.MustNewConstMetric(descVUs, prometheus.GaugeValue, float64(sc.VUs), sc.Name)
		ch <- prometheus.MustNewConstMetric(descVUsMax, prometheus.GaugeValue, float64(sc.VUsMax), sc.Name)
		collectFeatures(ch, sc.Name, sc.Features)
	}
	collectGenerator(ch, s.Generator)
}

// MetricNames lists the names of the live metrics, as a scrape shows them
// before suffixes (_sum, _count): what a dashboard may query.
func MetricNames() []string {
	ch := make(chan *prometheus.Desc, 64)
	collector{}.Describe(ch)
	close(ch)
	var names []string
	for d := range ch {
		names = append(names, descName(d))
	}
	return names
}

// descName is a Desc's fully-qualified name (Desc has no getter: its
// String form is documented as `Desc{fqName: "NAME", ...}`).
func descName(d *prometheus.Desc) string {
	s := d.String()
	_, rest, _ := strings.Cut(s, `fqName: "`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

func summary(d *prometheus.Desc, h *hdrhistogram.Histogram, labels ...string) prometheus.Metric {
	q := make(map[float64]float64, len(quantiles))
	if h.TotalCount() > 0 {
		for _, p := range quantiles {
			q[p] = float64(h.ValueAtQuantile(p*100)) / 1e6
		}
	}
	sum := h.Mean() * float64(h.TotalCount()) / 1e6
	return prometheus.MustNewConstSummary(d, uint64(h.TotalCount()), sum, q, labels...)
}

// Server serves /metrics while a run lasts.
type Server struct {
	srv  *http.Server
	addr string
	done sync.WaitGroup
}

// Addr is the address the server listens on (its port chosen when Serve
// was given port 0).
func (s *Server) Addr() string { return s.addr }

// Serve serves /metrics on addr from snap, and extra's metrics beside
// them (the probe's; nil: none). A scrape that comes after the run is
// over finds nothing: the caller closes the server first.
func Serve(addr string, snap func() Snapshot, extra prometheus.Gatherer) (*Server, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collector{snap}); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	var g prometheus.Gatherer = reg
	if extra != nil {
		g = prometheus.Gatherers{reg, extra}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w", strconv.Quote(addr), err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, addr: ln.Addr().String()}
	s.done.Go(func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the run goes on without live metrics
		}
	})
	return s, nil
}

// Close stops serving, within a second. Safe on nil.
func (s *Server) Close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
	s.done.Wait()
}

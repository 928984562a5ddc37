package engine

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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leakbench/leakbench/scenarios/mcp"
)

// Live metrics at RunOptions.MetricsAddr, read from the engine's own
// counters and histograms at each scrape: nothing is added to the request
// path. Names are the threshold metrics' with a leakbench_ prefix;
// durations are in seconds, as Prometheus wants.
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

var promQuantiles = []float64{0.5, 0.9, 0.95, 0.99}

// collector exposes a running engine to Prometheus.
type collector struct{ e *engine }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReqs, descFailed, descAborted, descDuration,
		descIterations, descIterDuration, descDropped, descVUs, descVUsMax,
		descHTTPReqs, descHTTPFailed, descHTTPDuration} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	for _, g := range e.m.collect(nil) {
		scen := e.runs[g.key.scen].cs.Name
		if g.key.op == opIteration {
			ch <- summary(descIterDuration, g, scen)
			continue
		}
		reqs, failed, duration := descReqs, descFailed, descDuration
		var labels []string
		if g.key.op == opHTTP {
			// Not MCP requests: series of their own (summary.json's load.http).
			reqs, failed, duration = descHTTPReqs, descHTTPFailed, descHTTPDuration
			method, name, _ := strings.Cut(e.m.name(g.key.name), " ")
			labels = []string{scen, method, name, strconv.Itoa(int(g.key.status))}
		} else {
			labels = []string{scen, opNames[g.key.op], e.m.name(g.key.name)}
			ch <- prometheus.MustNewConstMetric(descAborted, prometheus.CounterValue, float64(g.aborted), labels...)
		}
		ch <- prometheus.MustNewConstMetric(reqs, prometheus.CounterValue, float64(g.reqs), labels...)
		for k, n := range g.kinds {
			if n > 0 {
				ch <- prometheus.MustNewConstMetric(failed, prometheus.CounterValue, float64(n), append(labels, mcp.Kinds[k])...)
			}
		}
		ch <- summary(duration, g, labels...)
	}
	for _, sr := range e.runs {
		sc, name := sr.sc, sr.cs.Name
		ch <- prometheus.MustNewConstMetric(descIterations, prometheus.CounterValue, float64(sc.iterations.Load()), name)
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(sc.dropped.Load()), name)
		ch <- prometheus.MustNewConstMetric(descVUs, prometheus.GaugeValue, float64(sc.active.Load()), name)
		ch <- prometheus.MustNewConstMetric(descVUsMax, prometheus.GaugeValue, float64(sc.peak.Load()), name)
	}
}

// MetricNames lists the names of the engine's live metrics, as a scrape
// shows them before suffixes (_sum, _count): what a dashboard may query.
func MetricNames() []string {
	ch := make(chan *prometheus.Desc, 32)
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

func summary(d *prometheus.Desc, g *merged, labels ...string) prometheus.Metric {
	h := g.hist
	q := make(map[float64]float64, len(promQuantiles))
	if h.TotalCount() > 0 {
		for _, p := range promQuantiles {
			q[p] = float64(h.ValueAtQuantile(p*100)) / 1e6
		}
	}
	sum := h.Mean() * float64(h.TotalCount()) / 1e6
	return prometheus.MustNewConstSummary(d, uint64(h.TotalCount()), sum, q, labels...)
}

// metricsServer serves /metrics while the run lasts.
type metricsServer struct {
	srv  *http.Server
	done sync.WaitGroup
}

func serveMetrics(addr string, e *engine, extra prometheus.Gatherer) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collector{e}); err != nil {
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
	ms := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	ms.done.Go(func() {
		if err := ms.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the run goes on without live metrics
		}
	})
	return ms, nil
}

func (ms *metricsServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if ms.srv.Shutdown(ctx) != nil {
		_ = ms.srv.Close()
	}
	ms.done.Wait()
}

package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// poolCollector exports pgxpool's statistics, read at scrape time, under
// names modelled on client_golang's database/sql collector (go_sql_*).
type poolCollector struct {
	store                                                   *Store
	acquired, idle, total, max, constructing                *prometheus.Desc
	acquires, waits, waitSeconds, canceled, leakedNotClosed *prometheus.Desc
	timeouts                                                *prometheus.Desc
}

func newPoolCollector(s *Store) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("mcp_gateway_db_pool_"+name, help, nil, nil)
	}
	return &poolCollector{
		store:           s,
		acquired:        d("acquired_connections", "Connections currently checked out of the pool."),
		idle:            d("idle_connections", "Idle connections in the pool."),
		total:           d("total_connections", "Connections in the pool (acquired, idle and being opened)."),
		max:             d("max_connections", "Maximum size of the pool."),
		constructing:    d("constructing_connections", "Connections being opened."),
		acquires:        d("acquires_total", "Successful acquires from the pool."),
		waits:           d("acquire_waits_total", "Acquires that had to wait for a connection (pool empty)."),
		waitSeconds:     d("acquire_wait_seconds_total", "Total time spent waiting in acquires that had to wait."),
		canceled:        d("acquires_canceled_total", "Acquires cancelled by their context (timed out or client gone)."),
		leakedNotClosed: d("unclosed_sessions", "Sessions whose request has finished but which were never closed (leaked)."),
		timeouts:        d("acquire_timeouts_total", "Acquires that gave up because no connection became free within the pool timeout (pool exhausted)."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.constructing, c.acquires, c.waits, c.waitSeconds, c.canceled, c.leakedNotClosed, c.timeouts} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.store.pool.Stat()
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	k := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	g(c.acquired, float64(st.AcquiredConns()))
	g(c.idle, float64(st.IdleConns()))
	g(c.total, float64(st.TotalConns()))
	g(c.max, float64(st.MaxConns()))
	g(c.constructing, float64(st.ConstructingConns()))
	k(c.acquires, float64(st.AcquireCount()))
	k(c.waits, float64(st.EmptyAcquireCount()))
	k(c.waitSeconds, st.EmptyAcquireWaitTime().Seconds())
	k(c.canceled, float64(st.CanceledAcquireCount()))
	g(c.leakedNotClosed, float64(c.store.unclosed()))
	k(c.timeouts, float64(c.store.poolTimeouts.Load()))
}

// metrics are the gateway's request metrics: HTTP requests as promhttp
// measures them, and MCP requests by JSON-RPC method and outcome.
type metrics struct {
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight *prometheus.GaugeVec
	mcpRequests  *prometheus.CounterVec
	mcpDuration  *prometheus.HistogramVec
	toolCalls    *prometheus.CounterVec
}

// Buckets from 1 ms to ~33 s: healthy calls take milliseconds, the leaks
// show up as seconds (pool timeout, upstream latency, 30 s waits).
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 16)

func newMetrics(reg prometheus.Registerer) *metrics {
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcp_gateway_http_requests_total",
			Help: "HTTP requests served, by handler, method and status code."}, []string{"handler", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcp_gateway_http_request_duration_seconds",
			Help: "Time to serve an HTTP request (for SSE answers: until the stream ends), by handler and method.", Buckets: latencyBuckets},
			[]string{"handler", "method"}),
		httpInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcp_gateway_http_requests_in_flight",
			Help: "HTTP requests being served, by handler."}, []string{"handler"}),
		mcpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcp_gateway_mcp_requests_total",
			Help: "MCP requests handled, by JSON-RPC method and result (ok, error: a JSON-RPC error, tool_error: a tool result with isError, task: a tools/call answered with a task)."},
			[]string{"method", "result"}),
		mcpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcp_gateway_mcp_request_duration_seconds",
			Help: "Time to handle an MCP request, by JSON-RPC method.", Buckets: latencyBuckets}, []string{"method"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcp_gateway_tool_calls_total",
			Help: "tools/call requests, by tool (built-in name, or \"registry\" for a team's registered tool) and result (ok, error, tool_error, task)."},
			[]string{"tool", "result"}),
	}
	f(m.httpRequests)
	f(m.httpDuration)
	f(m.httpInFlight)
	f(m.mcpRequests)
	f(m.mcpDuration)
	f(m.toolCalls)
	return m
}

// instrumentHTTP wraps h with the HTTP request metrics, labelled handler.
// promhttp's wrappers keep http.Flusher, which SSE answers need.
func (m *metrics) instrumentHTTP(handler string, h http.Handler) http.Handler {
	l := prometheus.Labels{"handler": handler}
	return promhttp.InstrumentHandlerInFlight(m.httpInFlight.With(l),
		promhttp.InstrumentHandlerDuration(m.httpDuration.MustCurryWith(l),
			promhttp.InstrumentHandlerCounter(m.httpRequests.MustCurryWith(l), h)))
}

// mcpMethods are the methods given their own label value; anything else
// counts as "other", so that clients cannot grow the label set.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"prompts/list": true, "prompts/get": true, "server/discover": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"tasks/get": true, "tasks/cancel": true, "tasks/update": true,
}

// mcpMiddleware measures every MCP request the server receives.
func (m *metrics) mcpMiddleware(builtin map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			res, err := next(ctx, method, req)
			label := method
			if !mcpMethods[method] {
				label = "other"
			}
			result := "ok"
			if err != nil {
				result = "error"
			} else if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
				result = "tool_error"
			} else if _, ok := res.(*taskResult); ok && method == "tools/call" {
				result = "task"
			}
			if strings.HasPrefix(method, "notifications/") {
				result = "ok" // notifications have no answer to fail
			}
			m.mcpRequests.WithLabelValues(label, result).Inc()
			m.mcpDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				tool := "registry"
				if builtin[r.Params.Name] {
					tool = r.Params.Name
				}
				var wire *jsonrpc.Error
				if err != nil && errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams && !builtin[r.Params.Name] {
					tool = "unknown" // an unknown tool: not a registered one either
				}
				m.toolCalls.WithLabelValues(tool, result).Inc()
			}
			return res, err
		}
	}
}

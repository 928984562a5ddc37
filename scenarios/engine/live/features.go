package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// The 2026-07-28 features' counters (summary.json's load.features), by
// scenario: what a dashboard shows beside the requests, since a cache hit
// or a listen stream's notification is no request.
var (
	descCacheHits = prometheus.NewDesc("leakbench_mcp_cache_hits_total",
		"Steps served from the user's cache while the last result's ttlMs lasted: nothing was sent.", []string{"scenario", "method"}, nil)
	descInputRounds = prometheus.NewDesc("leakbench_mcp_input_round_trips_total",
		"Retries that answered input_required results with the step's inputs.", []string{"scenario"}, nil)
	descTasks = prometheus.NewDesc("leakbench_mcp_tasks_total",
		"Tool calls run as tasks, by how they ended (created: all; completed, failed, cancelled by the server, given_up by the step).", []string{"scenario", "state"}, nil)
	descListenStreams = prometheus.NewDesc("leakbench_mcp_listen_streams_total",
		"Notification streams opened (subscriptions/listen, or the 2025 GET stream).", []string{"scenario"}, nil)
	descListenEvents = prometheus.NewDesc("leakbench_mcp_listen_events_total",
		"Notifications received on the streams, by method.", []string{"scenario", "method"}, nil)
)

var featureDescs = []*prometheus.Desc{descCacheHits, descInputRounds, descTasks, descListenStreams, descListenEvents}

// collectFeatures sends one scenario's feature counters (none when it
// used none).
func collectFeatures(ch chan<- prometheus.Metric, scenario string, f *rundir.FeatureStats) {
	if f == nil {
		return
	}
	counter := func(d *prometheus.Desc, n int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(n), append([]string{scenario}, labels...)...)
	}
	for method, n := range f.CacheHits {
		counter(descCacheHits, n, method)
	}
	counter(descInputRounds, f.InputRoundTrips)
	if t := f.Tasks; t != nil {
		for state, n := range map[string]int64{"created": t.Created, "completed": t.Completed, "failed": t.Failed,
			"cancelled": t.Cancelled, "given_up": t.GivenUp} {
			counter(descTasks, n, state)
		}
	}
	if l := f.Listen; l != nil {
		counter(descListenStreams, l.Streams)
		for method, n := range l.Events {
			counter(descListenEvents, n, method)
		}
	}
}

package live

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestServe: a scrape shows each kind of series under its own names and
// labels, from the snapshot of the moment, and nothing once closed.
func TestServe(t *testing.T) {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, v := range []int64{1000, 2000, 40000} {
		h.RecordValue(v) //nolint:errcheck
	}
	scrapes := 0
	snap := func() Snapshot {
		scrapes++
		return Snapshot{
			Series: []Series{
				{Scenario: "a", Kind: KindMCP, Method: "tools/call", Name: "echo", Requests: 3, Aborted: 1, Failures: map[string]int64{"timeout": 2, "jsonrpc": 0}, Hist: h},
				{Scenario: "a", Kind: KindHTTP, Method: "GET", Name: "health", Status: 503, Requests: 4, Failures: map[string]int64{"http_5xx": 4}, Hist: h},
				{Scenario: "a", Kind: KindIteration, Hist: h},
			},
			Scenarios: []Scenario{{Name: "a", Iterations: 7, Dropped: 1, VUs: 2, VUsMax: 5, Features: &rundir.FeatureStats{
				CacheHits: map[string]int64{"tools/list": 9}, InputRoundTrips: 4, Tasks: &rundir.TaskStats{Created: 3, Completed: 2},
				Listen: &rundir.ListenStats{Streams: 2, Events: map[string]int64{"notifications/tools/list_changed": 6}}}}},
			Generator: &Generator{CPUs: 2, Cores: 0.25, MachineBusy: 0.5, MachineKnown: true, LateSamples: 9, LateP50: 0.001, LateP99: 0.003, LateMax: 0.84},
		}
	}
	s, err := Serve("127.0.0.1:0", snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.CloseIdleConnections()
	for _, want := range []string{
		`leakbench_mcp_reqs_total{method="tools/call",name="echo",scenario="a"} 3`,
		`leakbench_mcp_req_aborted_total{method="tools/call",name="echo",scenario="a"} 1`,
		`leakbench_mcp_req_failures_total{kind="timeout",method="tools/call",name="echo",scenario="a"} 2`,
		`leakbench_mcp_req_duration_seconds{method="tools/call",name="echo",scenario="a",quantile="0.99"} 0.04`,
		`leakbench_http_reqs_total{method="GET",name="health",scenario="a",status="503"} 4`,
		`leakbench_http_req_failures_total{kind="http_5xx",method="GET",name="health",scenario="a",status="503"} 4`,
		`leakbench_iteration_duration_seconds_count{scenario="a"} 3`,
		`leakbench_iterations_total{scenario="a"} 7`, `leakbench_dropped_iterations_total{scenario="a"} 1`,
		`leakbench_vus{scenario="a"} 2`, `leakbench_vus_max{scenario="a"} 5`,
		`leakbench_mcp_cache_hits_total{method="tools/list",scenario="a"} 9`,
		`leakbench_mcp_input_round_trips_total{scenario="a"} 4`,
		`leakbench_mcp_tasks_total{scenario="a",state="created"} 3`, `leakbench_mcp_tasks_total{scenario="a",state="completed"} 2`,
		`leakbench_mcp_listen_streams_total{scenario="a"} 2`,
		`leakbench_mcp_listen_events_total{method="notifications/tools/list_changed",scenario="a"} 6`,
		`leakbench_generator_cpus 2`, `leakbench_generator_cores 0.25`, `leakbench_generator_machine_busy_ratio 0.5`,
		`leakbench_generator_schedule_late_p50_seconds 0.001`, `leakbench_generator_schedule_late_p99_seconds 0.003`,
		`leakbench_generator_schedule_late_max_seconds 0.84`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), `kind="jsonrpc"`) {
		t.Error("a kind that did not occur is reported")
	}
	s.Close()
	if _, err := c.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("still serving after Close")
	}
	if scrapes != 1 {
		t.Errorf("%d snapshots for one scrape", scrapes)
	}
	var nilServer *Server
	nilServer.Close()
	if names := MetricNames(); len(names) != 23 || !slices.Contains(names, "leakbench_http_req_duration_seconds") || !slices.Contains(names, "leakbench_mcp_tasks_total") {
		t.Errorf("MetricNames() = %v", names)
	}
}

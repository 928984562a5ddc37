package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// TestFiguresEqualMetrics: the page and /metrics read one snapshot alike
// — users, requests and failures summed the same way over scenarios,
// methods and kinds. The snapshot holds still, so both see one instant.
func TestFiguresEqualMetrics(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	_ = h.RecordValue(2500)
	snap := live.Snapshot{
		Series: []live.Series{
			{Scenario: "a", Kind: live.KindMCP, Method: "tools/call", Name: "q", Requests: 70, Failures: map[string]int64{"timeout": 4, "http_5xx": 2}, Hist: h},
			{Scenario: "a", Kind: live.KindMCP, Method: "ping", Requests: 30, Failures: map[string]int64{"aborted": 3, "canceled": 2}, Hist: h},
			{Scenario: "b", Kind: live.KindMCP, Method: "tools/list", Requests: 11, Failures: map[string]int64{"timeout": 1}, Hist: h},
			{Scenario: "a", Kind: live.KindIteration, Requests: 0, Hist: h},
		},
		Scenarios: []live.Scenario{{Name: "a", VUs: 12, VUsMax: 15, Dropped: 3}, {Name: "b", VUs: 5, VUsMax: 5}},
	}
	ms, err := live.Serve("127.0.0.1:0", func() live.Snapshot { return snap }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Started(func() live.Snapshot { return snap })
	s.tick(time.Now())
	var p Point
	if err := json.Unmarshal(s.history[0], &p); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + ms.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := func(metric string) int64 {
		var n float64
		for _, m := range regexp.MustCompile(`(?m)^`+metric+`\{([^}]*)\} (\S+)$`).FindAllStringSubmatch(string(body), -1) {
			if strings.Contains(m[1], `kind="aborted"`) || strings.Contains(m[1], `kind="canceled"`) {
				continue // not failures (the progress line's errors, load.jsonl's failures)
			}
			v, _ := strconv.ParseFloat(m[2], 64)
			n += v
		}
		return int64(n)
	}
	for name, pair := range map[string][2]int64{
		"users":    {p.Load.Users, sum("leakbench_vus")},
		"requests": {p.Load.Requests, sum("leakbench_mcp_reqs_total")},
		"failures": {p.Load.Failures, sum("leakbench_mcp_req_failures_total")},
		"dropped":  {p.Load.Dropped, sum("leakbench_dropped_iterations_total")},
	} {
		if pair[0] != pair[1] || pair[0] == 0 {
			t.Errorf("%s: the page %d, /metrics %d", name, pair[0], pair[1])
		}
	}
}

package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestRunBothEras plays one flow under each protocol setting against
// go-sdk's server serving both eras on one endpoint (and, for auto's
// fallback, against one serving only the handshake): which version the
// users spoke is counted, a 2026-07-28 user's start is measured as
// server/discover and its endSession does nothing, a 2025 user's start is
// initialize and its endSession a DELETE.
func TestRunBothEras(t *testing.T) {
	const flow = `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 3
    iterations: 2
    flow:
      - tools/list
      - tools/call: {name: echo, arguments: {text: hi}}
      - %s
      - endSession
thresholds:
  mcp_req_duration{method:server/discover}: ["p(95)<5000"]
  mcp_reqs{method:initialize}: ["count>=0"]
`
	tests := []struct {
		name, setting string
		legacyOnly    bool   // the server speaks only the handshake era
		step          string // the flow's third step
		protocol      map[string]int64
		// Starts measured as each method, DELETEs (= ended sessions).
		discovers, inits, deletes int64
	}{
		// 3 starts as server/discover, 6 server/discover steps; the
		// endSession steps send nothing, so nobody starts again.
		{"auto", "", false, "server/discover", map[string]int64{mcp.Version20260728: 3}, 9, 0, 0},
		{"2026-07-28", "protocolVersion: 2026-07-28\n", false, "server/discover", map[string]int64{mcp.Version20260728: 3}, 9, 0, 0},
		// 3 starts, 3 more after the first iteration's endSession; the
		// server/discover steps are sent sessionless in this era too.
		{"negotiate", "protocolVersion: negotiate\n", false, "server/discover", map[string]int64{mcp.ProtocolVersion: 3}, 6, 6, 6},
		{"2025-11-25", "protocolVersion: 2025-11-25\n", false, "server/discover", map[string]int64{"2025-11-25": 3}, 6, 6, 6},
		// auto against a server of the handshake era: the newest 2025
		// version, and its starts measured as initialize.
		{"auto on a 2025 server", "", true, "prompts/list", map[string]int64{"2025-11-25": 3}, 0, 6, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			srv := mcptest.Start(t, mcptest.Options{SDK: true, DualEra: !tt.legacyOnly})
			pl := mustParse(t, tt.setting+strings.Replace(flow, "%s", tt.step, 1))
			res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failures != 0 || res.Iterations != 6 {
				t.Fatalf("failures %d (%v), iterations %d; samples %q", res.Failures, res.ErrorsByKind, res.Iterations, res.ErrorSamples)
			}
			if !maps.Equal(res.Protocol, tt.protocol) || !maps.Equal(res.Scenarios["s"].Protocol, tt.protocol) {
				t.Errorf("protocol %v (scenario %v), want %v", res.Protocol, res.Scenarios["s"].Protocol, tt.protocol)
			}
			got := [3]int64{res.Latency[plan.OpDiscover].Count, res.Latency[plan.OpInitialize].Count, res.Latency[plan.OpDelete].Count}
			if want := [3]int64{tt.discovers, tt.inits, tt.deletes}; got != want || res.EndedSessions != tt.deletes {
				t.Errorf("server/discover, initialize, DELETE %v, ended sessions %d; want %v", got, res.EndedSessions, want)
			}
			want := tt.discovers + tt.inits + tt.deletes + 12 // tools/list and tools/call
			if tt.step != plan.OpDiscover {
				want += 6
			}
			if res.Requests != want {
				t.Errorf("requests %d, want %d", res.Requests, want)
			}
			if th := res.Thresholds[0]; !th.Pass || th.Samples != tt.discovers {
				t.Errorf("threshold on server/discover: %+v, want %d samples", th, tt.discovers)
			}
			if th := res.Thresholds[1]; th.Observed != float64(tt.inits) {
				t.Errorf("mcp_reqs{method:initialize} observed %v, want %d", th.Observed, tt.inits)
			}
			modern := tt.protocol[mcp.Version20260728] > 0
			for _, r := range srv.Requests() {
				switch {
				case r.RPCMethod == "" && r.Method != http.MethodDelete:
				case modern && (r.RPCMethod == plan.OpInitialize || r.Method == http.MethodDelete || r.SessionID != ""):
					t.Errorf("a 2026-07-28 user sent %s %s with session %q", r.Method, r.RPCMethod, r.SessionID)
				case modern && r.Version != mcp.Version20260728:
					t.Errorf("%s with MCP-Protocol-Version %q", r.RPCMethod, r.Version)
				}
			}
			if n := srv.Sessions(); n != 0 {
				t.Errorf("%d sessions left open", n)
			}
		})
	}
}

// TestRunModernPingAndInitialize: ping does not exist in 2026-07-28 — the
// server's method-not-found counts as a failure of kind jsonrpc — and an
// initialize step in that era is a server/discover.
func TestRunModernPingAndInitialize(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true, SSE: true, DualEra: true})
	res, err := RunPlan(context.Background(), mustParse(t, `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 3
    flow: [initialize, ping, tools/list]
`), RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if d, i := res.Latency[plan.OpDiscover].Count, res.Latency[plan.OpInitialize].Count; d != 6 || i != 0 {
		t.Errorf("server/discover %d, initialize %d; want 6 and 0 (the flow starts with initialize)", d, i)
	}
	if res.Failures != 6 || res.ErrorsByKind[mcp.KindJSONRPC] != 6 || res.Latency[plan.OpPing].Count != 6 {
		t.Errorf("failures %d (%v), pings %d; want the 6 pings failed as jsonrpc", res.Failures, res.ErrorsByKind, res.Latency[plan.OpPing].Count)
	}
	if res.Protocol[mcp.Version20260728] != 2 || len(res.Protocol) != 1 {
		t.Errorf("protocol %v", res.Protocol)
	}
}

// TestModernRunOutputs: a 2026-07-28 run's method tags name
// server/discover: requests.jsonl (the users' starts at step -1, the
// step's at its own) and the /metrics labels.
func TestModernRunOutputs(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true, DualEra: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	scraped := make(chan string, 1)
	time.AfterFunc(700*time.Millisecond, func() {
		c := &http.Client{Timeout: 2 * time.Second}
		defer c.CloseIdleConnections()
		resp, err := c.Get("http://" + addr + "/metrics")
		if err != nil {
			scraped <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		scraped <- string(b)
	})
	dir := t.TempDir()
	pl := mustParse(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 1200ms, flow: [server/discover, think: 20ms]}\n")
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL, RunDir: dir, MetricsAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	body := <-scraped
	if !strings.Contains(body, `leakbench_mcp_reqs_total{method="server/discover",name="",scenario="s"}`) || strings.Contains(body, `method="initialize"`) {
		t.Errorf("/metrics, want server/discover and no initialize:\n%s", body)
	}
	f, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	steps := map[int]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r rundir.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		if r.Method != plan.OpDiscover {
			t.Errorf("request %+v, want only server/discover", r)
		}
		steps[r.Step]++
	}
	if steps[-1] != 2 || steps[0]+2 != res.Requests {
		t.Errorf("requests.jsonl by step %v (%d requests); want the 2 starts at -1, the rest at 0", steps, res.Requests)
	}
}

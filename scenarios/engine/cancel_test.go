package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// TestRunCancelNotices: users that give up on a slow call (abortAfter,
// the request timeout) cancel it as their era asks. The go-sdk server in
// the 2025 era receives exactly one notifications/cancelled per abandoned
// call, naming that call's id on that call's session, and the result
// counts them; in 2026-07-28 it receives none, and none is counted.
func TestRunCancelNotices(t *testing.T) {
	const flow = `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 2
%s    flow:
      - tools/call: {name: slow, abortAfter: 100ms}
      - tools/call: {name: slow, timeout: 150ms}
      - tools/call: {name: echo, arguments: {text: after}}
`
	for _, tt := range []struct {
		name, setting string
		opts          mcptest.Options
		notices       int64
	}{
		{"2025", "    protocolVersion: negotiate\n", mcptest.Options{SDK: true}, 8},
		{"2025 sse", "    protocolVersion: 2025-11-25\n", mcptest.Options{SDK: true, SSE: true}, 8},
		{"2026-07-28", "    protocolVersion: 2026-07-28\n", mcptest.Options{SDK: true, DualEra: true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			srv := mcptest.Start(t, tt.opts)
			res, err := RunPlan(context.Background(), mustParse(t, strings.Replace(flow, "%s", tt.setting, 1)), RunOptions{Target: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if res.Aborted != 4 || res.ErrorsByKind[mcp.KindTimeout] != 4 || res.Latency["tools/call:echo"].Count != 4 {
				t.Fatalf("aborted %d, errors %v, echo answered %d; want 4, 4 timeouts, 4", res.Aborted, res.ErrorsByKind, res.Latency["tools/call:echo"].Count)
			}
			if got := srv.Count("notifications/cancelled"); int64(got) != tt.notices {
				t.Errorf("the server received %d notifications/cancelled, want %d", got, tt.notices)
			}
			var sent, refused, failed int64
			if f := res.Features; f != nil && f.CancelNotices != nil {
				sent, refused, failed = f.CancelNotices.Sent, f.CancelNotices.Refused, f.CancelNotices.Failed
			}
			if sent != tt.notices || refused != 0 || failed != 0 {
				t.Errorf("counted %d sent, %d refused, %d failed; want %d, 0, 0", sent, refused, failed, tt.notices)
			}
			if tt.notices > 0 {
				checkNoticesMatch(t, srv.Requests())
			}
		})
	}
}

// checkNoticesMatch checks that each slow call has exactly one notice,
// on its session, naming its id.
func checkNoticesMatch(t *testing.T, reqs []mcptest.Request) {
	t.Helper()
	type key struct{ session, id string }
	calls := map[key]int{}
	for _, r := range reqs {
		if r.RPCMethod == "tools/call" && strings.Contains(string(r.Params), `"slow"`) {
			calls[key{r.SessionID, string(r.ID)}] = 0
		}
	}
	for _, r := range reqs {
		if r.RPCMethod != "notifications/cancelled" {
			continue
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(r.Params, &p)
		k := key{r.SessionID, string(p.RequestID)}
		if _, ok := calls[k]; !ok {
			t.Errorf("notice for request %s on session %q: no such slow call", p.RequestID, r.SessionID)
			continue
		}
		calls[k]++
	}
	for k, n := range calls {
		if n != 1 {
			t.Errorf("slow call %s on session %q: %d notices, want 1", k.id, k.session, n)
		}
	}
}

package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// featuresFlow lists, answers input_required and listens; %s is the
// scenario's cache setting.
const featuresFlow = `
scenarios:
  s:
    executor: per-vu-iterations
    vus: 3
    iterations: 4
    listen: true
    %s
    flow:
      - tools/list
      - resources/read: {uri: file:///r0.txt}
      - tools/call:
          name: ask
          inputs:
            elicitation/create: {action: accept, content: {name: ada}}
          check: {path: 'content.0.text', equals: 'Hello, ada!'}
      - think: 100ms
`

// TestFeaturesOnSDKServer plays against go-sdk's server in the 2026-07-28
// era: lists and reads are served from the users' caches while ttlMs
// lasts (each user fetches once; with cache: ignore every time),
// input_required is answered from the step's inputs (one extra round
// trip per call, and the final result is the greeting), and every user's
// subscriptions/listen stream is opened and acknowledged.
func TestFeaturesOnSDKServer(t *testing.T) {
	for _, cache := range []string{"", "cache: ignore"} {
		t.Run("cache="+cache, func(t *testing.T) {
			checkLeaks(t)
			srv := mcptest.Start(t, mcptest.Options{SDK: true, DualEra: true, TTL: time.Minute, Ask: true})
			pl := mustParse(t, strings.Replace(featuresFlow, "%s", cache, 1))
			res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if res.Failures != 0 || res.Iterations != 12 {
				t.Fatalf("failures %d (%v), iterations %d; samples %q", res.Failures, res.ErrorsByKind, res.Iterations, res.ErrorSamples)
			}
			f := res.Features
			if f == nil {
				t.Fatal("no features counted")
			}
			lists, reads := res.Latency[plan.OpListTools].Count, res.Latency[plan.OpReadResource].Count
			if cache == "" {
				if lists != 3 || reads != 3 || f.CacheHits[plan.OpListTools] != 9 || f.CacheHits[plan.OpReadResource] != 9 {
					t.Errorf("sent %d tools/list and %d resources/read, cache hits %v; want 3 each and 9 hits each", lists, reads, f.CacheHits)
				}
			} else if lists != 12 || reads != 12 || len(f.CacheHits) != 0 {
				t.Errorf("cache: ignore sent %d tools/list and %d resources/read, hits %v; want 12 each, none", lists, reads, f.CacheHits)
			}
			if f.InputRoundTrips != 12 || res.Latency[plan.OpCallTool].Count != 12 {
				t.Errorf("%d input round trips for %d calls, want 12 for 12", f.InputRoundTrips, res.Latency[plan.OpCallTool].Count)
			}
			if len(res.Checks) != 1 || res.Checks[0].Passes != 12 {
				t.Errorf("checks %+v, want the greeting 12 times", res.Checks)
			}
			if f.Listen == nil || f.Listen.Streams < 3 || f.Listen.Events["notifications/subscriptions/acknowledged"] < 3 {
				t.Errorf("listen %+v, want every user's stream opened and acknowledged", f.Listen)
			}
		})
	}
}

// TestListenOn2025Session: in the 2025 era a listening user opens its
// session's GET stream, and closes it when the session ends.
func TestListenOn2025Session(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	pl := mustParse(t, `
protocolVersion: 2025-06-18
scenarios:
  s:
    executor: per-vu-iterations
    vus: 2
    iterations: 2
    listen: true
    flow:
      - tools/call: {name: echo, arguments: {text: hi}}
      - think: 200ms
      - endSession
`)
	res, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 {
		t.Fatalf("failures %d: %q", res.Failures, res.ErrorSamples)
	}
	if f := res.Features; f == nil || f.Listen == nil || f.Listen.Streams < 4 || f.Listen.Unsupported != 0 {
		t.Errorf("features %+v, want a GET stream for each of the 4 sessions", f)
	}
	var gets int
	for _, r := range srv.Requests() {
		if r.Method == "GET" {
			gets++
			if r.SessionID == "" {
				t.Error("a GET stream without the session id")
			}
		}
	}
	if gets < 4 {
		t.Errorf("the server saw %d GETs, want one per session (4)", gets)
	}
}

package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// TestLatenessLeavesOutTheTargetsDelete: a user that thinks and then
// initializes again ends its session first (a DELETE, in the 2025 era).
// The DELETE is the request the think's due time is met by; a target that
// is slow to answer it delays the initialize after it, and that wait is
// the target's, not the generator's. Here every DELETE waits 300 ms at a
// proxy in front of the server: the self-check must still say kept up,
// with a lateness p99 far below 300 ms. Taking the lateness at the
// initialize instead, as leakbench once did, puts every one of those
// samples at 300 ms or more and fails it.
func TestLatenessLeavesOutTheTargetsDelete(t *testing.T) {
	checkLeaks(t)
	const deleteDelay = 300 * time.Millisecond
	srv := mcptest.Start(t, mcptest.Options{})
	up, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(up)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			time.Sleep(deleteDelay)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	target := slow.URL + up.Path

	p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, ProtocolVersion: plan.NegotiateVersion, Scenarios: []plan.Scenario{{
		Name: "reinit", Executor: plan.ExecConstantVUs, VUs: 4, Duration: plan.Duration(2 * time.Second), GracefulStop: plan.Duration(5 * time.Second),
		Flow: []plan.Step{
			{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkFixed, Duration: plan.Duration(20 * time.Millisecond)}},
			{Kind: plan.OpInitialize},
		},
	}}}
	res, err := RunPlan(context.Background(), p, RunOptions{Target: target, RunDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.EndedSessions < 8 {
		t.Fatalf("%d sessions ended: the plan did not re-initialize through slow DELETEs", res.EndedSessions)
	}
	g := res.Generator
	if g == nil {
		t.Fatal("no generator record")
	}
	if g.Verdict != rundir.GeneratorKeptUp || g.Lateness.P99Ms >= float64(deleteDelay/time.Millisecond)/2 {
		t.Errorf("verdict %s %q, lateness %+v after %d slow DELETEs; want kept_up with a p99 well under the DELETE's %v",
			g.Verdict, g.Reasons, g.Lateness, res.EndedSessions, deleteDelay)
	}
}

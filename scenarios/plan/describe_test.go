package plan_test

import (
	"testing"

	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

func TestDescribe(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"scenarios:\n  a: {executor: constant-vus, vus: 60, duration: 20s, flow: [ping]}\n",
			"a: constant-vus, 60 users for 20s; request timeout 10s"},
		{"timeout: 30s\nscenarios:\n  a: {executor: ramping-vus, startVUs: 0, stages: [{duration: 30s, target: 3000}, {duration: 150s, target: 3000}], flow: [ping]}\n",
			"a: ramping-vus, users 0→3000 over 30s, 3000 for 2m30s; request timeout 30s"},
		{"scenarios:\n  a: {executor: per-vu-iterations, vus: 2, iterations: 3, flow: [ping]}\n  b: {executor: constant-arrival-rate, rate: 20, duration: 1s, preAllocatedVUs: 2, maxVUs: 4, startTime: 200ms, timeout: 2s, flow: [ping]}\n",
			"a: per-vu-iterations, 2 users × 3 iterations (at most 10m0s); b: constant-arrival-rate, 20 iterations per second for 1s, up to 4 users, from 200ms, request timeout 2s; request timeout 10s"},
		{"scenarios:\n  a: {executor: ramping-arrival-rate, timeUnit: 1m, maxVUs: 5, stages: [{duration: 10s, target: 50}], flow: [ping]}\n",
			"a: ramping-arrival-rate, iterations per 1m0s 0→50 over 10s, up to 5 users; request timeout 10s"},
	} {
		p, err := scenariofile.Parse([]byte(tt.yaml), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Describe(); got != tt.want {
			t.Errorf("Describe:\n got %s\nwant %s", got, tt.want)
		}
	}
}

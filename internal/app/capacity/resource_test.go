package capacity

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestResourceBehind: a pool whose connections sat at the service's
// maximum, all busy, is named a saturated pool from the database's view,
// with the figures; "the service itself" is kept for a knee where the pool
// had room (#42).
func TestResourceBehind(t *testing.T) {
	svc := func(max int, share float64) rundir.ServiceConns {
		return rundir.ServiceConns{Name: "mcp-gateway", Max: max, BusyAtMaxShare: share, BusyAtMaxSeconds: share * 10, LoadSamples: 100}
	}
	for _, tc := range []struct {
		name     string
		poolSize int // the stack's configured gateway pool; 0: not known
		service  rundir.ServiceConns
		want     string
	}{
		{"10 of 10 all busy", 10, svc(10, 0.92), "the service's connection pool, saturated (database view): mcp-gateway had 10 connections, every one busy (active or in a transaction), for 92% of the load (9.2 s); its pool is 10 (stack config)"},
		{"size not known", 0, svc(10, 0.92), "its pool's size is not known: the most it had"},
		{"room in the pool", 40, svc(10, 0.92), "the service itself"},
		{"busy at its max only briefly", 10, svc(10, 0.2), "the service itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := &rundir.Summary{Probe: &rundir.ProbeSummary{}, Pool: &rundir.PoolState{Services: []rundir.ServiceConns{tc.service}}}
			sum.Environment.GatewayPoolSize = tc.poolSize
			if got := resourceBehind(sum); !strings.Contains(got, tc.want) {
				t.Errorf("resource %q, want %q", got, tc.want)
			}
		})
	}
}

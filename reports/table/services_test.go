package table

import (
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestServicesRow: the table's row names the service, says when it was
// grouped by address (no application_name), and whether it was pinned.
func TestServicesRow(t *testing.T) {
	for _, tt := range []struct {
		services []rundir.ServiceConns
		want     string
	}{
		{nil, "not sampled"},
		{[]rundir.ServiceConns{{Name: "pyservice", Max: 10, Pinned: true, PinnedSeconds: 27.4, PinnedAllIdleInTx: true}},
			"pyservice: max 10, pinned at 10 for 27.4 s, all idle in transaction"},
		{[]rundir.ServiceConns{{Name: "10.0.0.7", ByAddress: true, Max: 4}, {Name: "psql", Max: 1}},
			"10.0.0.7 (no application_name: grouped by client address): max 4, not pinned; 1 other application"},
	} {
		s := &rundir.Summary{Pool: &rundir.PoolState{Services: tt.services}}
		if got := servicesRow(s); got != tt.want {
			t.Errorf("servicesRow = %q, want %q", got, tt.want)
		}
	}
}

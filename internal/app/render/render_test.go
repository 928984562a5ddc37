package render

import (
	"reflect"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

func TestFailedThresholds(t *testing.T) {
	pass := rundir.Threshold{Metric: "mcp_req_failed", Expression: "rate<0.01", Pass: true}
	fail := rundir.Threshold{Metric: "mcp_req_duration", Expression: "p(95)<500", Pass: false}
	tests := []struct {
		name string
		sum  *rundir.Summary
		want []string
	}{
		{"no summary", nil, nil},
		{"no load", &rundir.Summary{}, nil},
		{"all pass", &rundir.Summary{Load: &rundir.LoadResult{Thresholds: []rundir.Threshold{pass}}}, nil},
		{"one fails", &rundir.Summary{Load: &rundir.LoadResult{Thresholds: []rundir.Threshold{pass, fail}}}, []string{"threshold mcp_req_duration p(95)<500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FailedThresholds(tt.sum); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FailedThresholds: %q, want %q", got, tt.want)
			}
		})
	}
}

// A run's verdict fails on a failed threshold and names it as the
// history records it.
func TestVerdict(t *testing.T) {
	r := &reports.Run{Summary: &rundir.Summary{EndReason: "completed", Probe: &rundir.ProbeSummary{Samples: 10}},
		Thresholds: []rundir.Threshold{{Metric: "mcp_req_duration", Expression: "p(95)<500", Observed: 812}}}
	pass, checks := Verdict(r)
	if pass {
		t.Fatal("a run with a failed threshold passed")
	}
	last := checks[len(checks)-1]
	if last.Name != "threshold mcp_req_duration p(95)<500" || last.Pass {
		t.Errorf("last check: %+v", last)
	}
	r.Thresholds[0].Pass = true
	if pass, checks := Verdict(r); !pass {
		t.Errorf("a clean run failed: %+v", checks)
	}
}

package reports

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func TestThresholdObserved(t *testing.T) {
	for raw, want := range map[string]string{"": "n/a", `,"observed":null`: "n/a", `,"observed":512.5`: "512.5", `,"observed":"12%"`: "n/a", `,"observed":[1]`: "n/a"} {
		var th rundir.Threshold
		if err := json.Unmarshal([]byte(`{"metric":"m"`+raw+`}`), &th); err != nil {
			t.Errorf("%q: %v", raw, err)
			continue
		}
		if got := th.ObservedString(); got != want {
			t.Errorf("%q: %q, want %q", raw, got, want)
		}
	}
	// NaN (nothing observed) is written as null: JSON has no NaN.
	raw, err := json.Marshal(rundir.Threshold{Metric: "m", Observed: math.NaN()})
	if err != nil || !strings.Contains(string(raw), `"observed":null`) {
		t.Errorf("NaN observed: %s, %v", raw, err)
	}
}

// TestSampleKeepsProbeFields: a samples.jsonl line reads back with every
// field the probe writes, the service pool's waiting callers and mapping
// included.
func TestSampleKeepsProbeFields(t *testing.T) {
	in := `{"time":"2026-01-01T00:00:00Z","gap":true,"app_pool":{"acquired":3,"max":4,"waiting":2,"mapping":"go_sql","targets":1}}`
	var got []rundir.Sample
	if bad, err := jsonl.Read(strings.NewReader(in), &got); err != nil || bad != 0 || len(got) != 1 {
		t.Fatalf("read %d samples, %d bad, %v", len(got), bad, err)
	}
	s := got[0]
	if !s.Gap || s.AppPool == nil || s.AppPool.Acquired != 3 || s.AppPool.Waiting != 2 || s.AppPool.Mapping != "go_sql" || s.AppPool.Targets != 1 {
		t.Errorf("sample read back as %+v (app pool %+v)", s, s.AppPool)
	}
}

package live

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestMergeEncoded: snapshots of two workers, sent encoded, merge into
// the counts summed and the histograms merged exactly.
func TestMergeEncoded(t *testing.T) {
	snap := func(lat, n int64, vus int64) Snapshot {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for range n {
			_ = h.RecordValue(lat)
		}
		return Snapshot{
			Series:    []Series{{Scenario: "s", Kind: KindMCP, Method: "tools/call", Name: "echo", Requests: n, Failures: map[string]int64{"jsonrpc": 1}, Hist: h}},
			Scenarios: []Scenario{{Name: "s", Iterations: n, VUs: vus, VUsMax: vus}},
			Generator: &Generator{CPUs: 1, Cores: 0.5, MachineKnown: true, LateSamples: n, LateP99: 0.002},
		}
	}
	var got []Snapshot
	for _, s := range []Snapshot{snap(1000, 90, 3), snap(50_000, 10, 2)} {
		raw, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, back)
	}
	m := Merge(got)
	if len(m.Series) != 1 || m.Series[0].Requests != 100 || m.Series[0].Failures["jsonrpc"] != 2 || m.Series[0].Hist.TotalCount() != 100 {
		t.Fatalf("merged series %+v", m.Series)
	}
	// 90 at 1 ms, 10 at 50 ms: the p95 is 50 ms, which neither alone has at p95.
	if p95 := m.Series[0].Hist.ValueAtQuantile(95); p95 < 49_950 || p95 > 50_050 {
		t.Errorf("merged p95 %d µs, want 50,000", p95)
	}
	if sc := m.Scenarios[0]; sc.VUs != 5 || sc.Iterations != 100 {
		t.Errorf("merged scenario %+v", sc)
	}
	if g := m.Generator; g.CPUs != 2 || g.Cores != 1 || g.LateSamples != 100 || !g.MachineKnown {
		t.Errorf("merged generator %+v", g)
	}
}

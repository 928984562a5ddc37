package plots

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestHTTPStepLines: the load plot draws the http steps' rate, failures
// and p95 when load.jsonl has them, and nothing of them when it does not.
func TestHTTPStepLines(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	render := func(http bool) string {
		var load []rundir.LoadPoint
		for s := range 10 {
			l := rundir.LoadPoint{Time: t0.Add(time.Duration(s+1) * time.Second), ElapsedSeconds: float64(s + 1), ActiveUsers: 5,
				Requests: 100, ReqPerSecond: 100, P50Ms: 2, P95Ms: 9, P99Ms: 20}
			if http {
				l.HTTPRequests, l.HTTPFailures, l.HTTPP95Ms = 30, int64(s%2), 15
			}
			load = append(load, l)
		}
		r := &Run{Summary: &rundir.Summary{Started: t0}, Load: load}
		var buf bytes.Buffer
		if err := Write(&buf, Load, SVG, r); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	with, without := render(true), render(false)
	for _, legend := range []string{"of which http steps", "http steps failed", "http steps p95"} {
		if !strings.Contains(with, legend) {
			t.Errorf("load plot of a run with http steps lacks %q", legend)
		}
		if strings.Contains(without, legend) {
			t.Errorf("load plot of a run without http steps has %q", legend)
		}
	}
}

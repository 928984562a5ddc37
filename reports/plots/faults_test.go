package plots

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestFaultBands: every time panel shades each applied fault's span, one
// legend entry for all; a fault never applied is not drawn.
func TestFaultBands(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	on, off := t0.Add(8*time.Second), t0.Add(16*time.Second)
	r := &Run{Summary: &rundir.Summary{Started: t0, Faults: []rundir.FaultRecord{
		{Name: "db latency", Applied: &on, Removed: &off},
		{Name: "terminate_backends", Applied: &off, Removed: &off},
		{Name: "pgbouncer_pause"}, // the run ended first
	}}, Samples: []rundir.Sample{{Time: t0}, {Time: t0.Add(20 * time.Second)}}}
	var buf bytes.Buffer
	if err := Write(&buf, Stuck, SVG, r); err != nil {
		t.Fatal(err)
	}
	// Two bands and the legend's swatch, in the fault colour.
	if n := strings.Count(buf.String(), "fill:#DB3B3B"); n != 3 {
		t.Errorf("%d shapes in the fault colour, want 3 (two bands, one legend entry)", n)
	}
}

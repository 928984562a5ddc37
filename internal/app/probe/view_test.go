package probe

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
)

// The status line says what a sample saw, or why there was none; on a
// pipe (not a terminal) every status is a line of its own.
func TestStatusLine(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local)
	tests := []struct {
		name string
		st   probes.Status
		want []string
	}{
		{"gap", probes.Status{Sample: rundir.Sample{Time: at, Gap: true, Error: "dial tcp: refused; retrying"}},
			[]string{"03:04:05  postgres: no sample (dial tcp: refused)", "episodes 0 (stuck 0)"}},
		{"stuck", probes.Status{Sample: rundir.Sample{Time: at, StuckIdleInTx: 2}, Episodes: 3, StuckEpisodes: 2},
			[]string{"stuck 2  idle-in-tx 0", "episodes 3 (stuck 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := statusLine(tt.st)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("status line %q lacks %q", line, w)
				}
			}
			var out bytes.Buffer
			v := newLiveView(&out, &out)
			v.status(tt.st)
			v.status(tt.st)
			v.done()
			if got := strings.Count(out.String(), "\n"); got != 2 {
				t.Errorf("on a pipe, two statuses: %d lines:\n%s", got, out.String())
			}
		})
	}
}

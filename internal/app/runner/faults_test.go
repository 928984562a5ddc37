package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/faults"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

const faultScen = "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 20s, flow: [ping]}\n"

// TestProfileFaults: a profile's faults timeline and recovery thresholds
// are read with it; bad ones are plan errors naming the file and line,
// before anything starts.
func TestProfileFaults(t *testing.T) {
	p, err := profiles.Parse([]byte("faults:\n  - {at: 2s, for: 3s, link: db, toxic: latency, latency: 100ms, jitter: 10ms}\n  - {at: 6s, action: terminate_backends, fraction: 0.5}\nrecovery:\n  recovery_seconds: [\"max<10\"]\n"+faultScen), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Faults) != 2 || p.Faults[0].Latency != 100*time.Millisecond || p.Faults[0].Line != 2 || p.Faults[1].Fraction != 0.5 || p.Faults[1].Line != 3 {
		t.Errorf("faults %+v", p.Faults)
	}
	if got := faults.Links(p.Faults); len(got) != 1 || got[0] != "db" {
		t.Errorf("fault links %v, want [db]", got)
	}
	if len(p.RecoverySeconds) != 1 {
		t.Errorf("recovery %v", p.RecoverySeconds)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"faults:\n  - {at: 2s, for: 1s, link: cache, toxic: latency}\n", `p.yaml:2: faults[0]: unknown link "cache"`},
		{"faults:\n  - {at: 2s, for: 5s, link: db, toxic: timeout}\n  - {at: 4s, for: 1s, link: db, toxic: timeout}\n", "p.yaml:3: faults[1]: overlaps the db timeout of line 2"},
		{"faults:\n  - {at: 25s, for: 1s, link: pg, toxic: reset_peer}\n", "p.yaml:2: faults[0]: starts at 25s, after the run's 20s of load"},
		{"faults:\n  - {at: 2s, for: 1s, link: db, toxic: latency, latncy: 1s}\n", `p.yaml:2: faults[0]: unknown option "latncy"`},
		{"faults:\n  - {at: 2s, for: 1s, link: db, toxic: latency}\nrecovery:\n  recovery_seconds: [\"most<3\"]\n", `p.yaml: recovery.recovery_seconds: threshold "most<3": unknown aggregation "most"`},
		{"faults:\n  - {at: 2s, for: 1s, link: db, toxic: latency}\nrecovery:\n  recovery_seconds: [\"rate<1\"]\n", `p.yaml: recovery.recovery_seconds: "rate<1": recovery times take max, min, avg, med or p(N)`},
		{"recovery:\n  recovery_seconds: [\"max<3\"]\n", "p.yaml: recovery.recovery_seconds: thresholds on recovery need a faults: timeline"},
	} {
		_, err := profiles.Parse([]byte(tt.yaml+faultScen), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, plan.ErrInvalidPlan) {
			t.Errorf("%q:\n got %v\nwant …%s…", tt.yaml, err, tt.want)
		}
	}
	// The built-in faults profile reads, and has its fault on the db link.
	data, _ := profiles.Read("faults")
	fp, err := profiles.Parse(data, "faults.yaml")
	if err != nil || len(fp.Faults) == 0 || fp.Faults[0].Link != "db" || fp.Stack.GatewayRequestTimeout == 0 {
		t.Errorf("built-in faults profile: %+v, %v", fp.Faults, err)
	}
}

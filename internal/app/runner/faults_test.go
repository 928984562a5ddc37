package runner

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

const faultScen = "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 20s, flow: [ping]}\n"

// TestProfileFaults: a profile's faults timeline and recovery thresholds
// are read with it; bad ones are plan errors naming the file and line,
// before anything starts.
func TestProfileFaults(t *testing.T) {
	p, err := ParseProfile([]byte("faults:\n  - {at: 2s, for: 3s, link: db, toxic: latency, latency: 100ms, jitter: 10ms}\n  - {at: 6s, action: terminate_backends, fraction: 0.5}\nrecovery:\n  recovery_seconds: [\"max<10\"]\n"+faultScen), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Faults) != 2 || p.Faults[0].Latency != 100*time.Millisecond || p.Faults[0].Line != 2 || p.Faults[1].Fraction != 0.5 || p.Faults[1].Line != 3 {
		t.Errorf("faults %+v", p.Faults)
	}
	if got := faultLinks(p); len(got) != 1 || got[0] != "db" {
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
		_, err := ParseProfile([]byte(tt.yaml+faultScen), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, plan.ErrInvalidPlan) {
			t.Errorf("%q:\n got %v\nwant …%s…", tt.yaml, err, tt.want)
		}
	}
	// The built-in faults profile reads, and has its fault on the db link.
	data, _ := profiles.Read("faults")
	fp, err := ParseProfile(data, "faults.yaml")
	if err != nil || len(fp.Faults) == 0 || fp.Faults[0].Link != "db" || fp.Stack.GatewayRequestTimeout == 0 {
		t.Errorf("built-in faults profile: %+v, %v", fp.Faults, err)
	}
}

func TestJudgeRecovery(t *testing.T) {
	now := time.Now()
	removed := now.Add(-20 * time.Second)
	two, six := 2.0, 6.0
	recs := []rundir.FaultRecord{{Removed: &removed, RecoverySeconds: &two}, {Removed: &removed, RecoverySeconds: &six}}
	got := judgeRecovery([]string{"max<10", "max<5", "avg<=4"}, recs, now)
	if len(got) != 3 || !got[0].Pass || got[1].Pass || !got[2].Pass || got[1].Observed != 6 || got[2].Observed != 4 {
		t.Errorf("judged %+v", got)
	}
	// A fault that never recovered fails, observed from its removal.
	got = judgeRecovery([]string{"max<100"}, []rundir.FaultRecord{{Removed: &removed}}, now)
	if got[0].Pass || math.Abs(got[0].Observed-20) > 0.01 {
		t.Errorf("unrecovered: %+v", got)
	}
	// Nothing applied: nothing observed, not passed.
	if got := judgeRecovery([]string{"max<10"}, []rundir.FaultRecord{{}}, now); got[0].Pass || !math.IsNaN(got[0].Observed) {
		t.Errorf("never applied: %+v", got)
	}
}

func TestHealthy(t *testing.T) {
	for _, tt := range []struct {
		s    probes.Sample
		want bool
	}{
		{probes.Sample{}, true},
		{probes.Sample{StuckIdleInTx: 1}, false},
		{probes.Sample{PgBouncer: &rundir.PoolSample{ClWaiting: 2}}, false},
		{probes.Sample{AppPool: &rundir.AppPoolSample{Acquired: 40, Max: 40}}, false},
		{probes.Sample{AppPool: &rundir.AppPoolSample{Acquired: 39, Max: 40}}, true},
		{probes.Sample{Error: "connection refused"}, false},
		{probes.Sample{Gap: true}, false},
	} {
		if got := healthy(tt.s); got != tt.want {
			t.Errorf("healthy(%+v) = %v", tt.s, got)
		}
	}
}

// TestCountErrorsLongLine: the request index is read by the one jsonl
// reader: a line longer than 1 MiB (bufio.Scanner's old cap here) is read,
// and the failures after it are counted, not silently dropped.
func TestCountErrorsLongLine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	applied, removed := t0.Add(10*time.Second), t0.Add(20*time.Second)
	var b strings.Builder
	line := func(r rundir.Request) {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	failed := func(at time.Duration) rundir.Request {
		return rundir.Request{TraceID: strings.Repeat("ab", 16), Method: "tools/call", Start: t0.Add(at), Outcome: rundir.RequestFailed, Kind: "http_5xx"}
	}
	line(failed(11 * time.Second))
	long := failed(12 * time.Second)
	long.Name = strings.Repeat("n", 2<<20) // a 2 MiB tool name
	line(long)
	for i := range 5 {
		line(failed(13*time.Second + time.Duration(i)*time.Second))
	}
	line(rundir.Request{Start: t0.Add(14 * time.Second), Outcome: rundir.RequestOK})
	path := filepath.Join(t.TempDir(), rundir.RequestsFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := []rundir.FaultRecord{{Name: "db latency", Applied: &applied, Removed: &removed}}
	if err := countErrors(path, recs); err != nil || recs[0].ErrorsDuring != 7 {
		t.Errorf("errors during the fault: %d (%v), want 7 (one line of 2 MiB among them)", recs[0].ErrorsDuring, err)
	}

	// A line past the reader's bound is an error, not a short count.
	long.Name = strings.Repeat("n", jsonl.MaxLine)
	line(long)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recs[0].ErrorsDuring = 0
	if err := countErrors(path, recs); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a line of %d MiB: %v (%d counted), want an error naming %s", jsonl.MaxLine>>20, err, recs[0].ErrorsDuring, path)
	}
	if err := countErrors(filepath.Join(t.TempDir(), rundir.RequestsFile), recs); err != nil {
		t.Errorf("no index: %v, want nothing counted and no error", err)
	}
}

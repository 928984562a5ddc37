package faultplay

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

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
		s    rundir.Sample
		want bool
	}{
		{rundir.Sample{}, true},
		{rundir.Sample{StuckIdleInTx: 1}, false},
		{rundir.Sample{PgBouncer: &rundir.PoolSample{ClWaiting: 2}}, false},
		{rundir.Sample{AppPool: &rundir.AppPoolSample{Acquired: 40, Max: 40}}, false},
		{rundir.Sample{AppPool: &rundir.AppPoolSample{Acquired: 39, Max: 40}}, true},
		{rundir.Sample{Error: "connection refused"}, false},
		{rundir.Sample{Gap: true}, false},
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

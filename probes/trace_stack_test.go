package probes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/querytext"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestTraceGroundTruth: sessions through PgBouncer in transaction mode sit
// idle in transaction after statements carrying known traceparents in
// sqlcommenter comments; every episode the probe records names exactly its
// statement's trace id and span id. Two sessions carry comments the probe
// cannot use — a traceparent not of the W3C form, and a comment the server
// cut at track_activity_query_size — and are counted, not errors.
func TestTraceGroundTruth(t *testing.T) {
	// Serial (no t.Parallel): it compares the probe's spans with the clock's ground truth.
	env := startStack(t, stack.Config{IdleInTxTimeout: stackTimeout, PgBouncerPoolSize: 30, Users: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runDir := t.TempDir()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN, RunDir: runDir, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	hexID := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	const n = 20
	// PgBouncer hands the same server connection (pid) to one client after
	// another: a hold is known by its pid and its span.
	type truth struct {
		traceID, spanID string
		pid             int32
		from, to        time.Time
	}
	var holds []truth
	hold := func(q string) truth {
		from := time.Now()
		c := connect(t, ctx, env.AppDSN)
		var pid int32
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		time.Sleep(300 * time.Millisecond) // several samples
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		return truth{pid: pid, from: from, to: time.Now()}
	}
	of := func(e rundir.Episode) int {
		for i, h := range holds {
			if h.pid == e.PID && !e.Start.Before(h.from.Add(-50*time.Millisecond)) && !e.Start.After(h.to) {
				return i
			}
		}
		return -1
	}
	for i := range n {
		traceID, spanID := hexID(16), hexID(8)
		q := stuckSQL + " /*application='ground-truth',route='case%20" + strings.Repeat("x", i) + "',traceparent='00-" + traceID + "-" + spanID + "-01'*/"
		h := hold(q)
		h.traceID, h.spanID = traceID, spanID
		holds = append(holds, h)
	}
	holds = append(holds, hold(stuckSQL+" /*traceparent='00-"+strings.ToUpper(hexID(16))+"-"+hexID(8)+"-01'*/"))
	// The server keeps track_activity_query_size - 1 bytes of a text: a
	// literal that long less 40 bytes puts the cut inside the comment.
	var size int
	if err := connect(t, ctx, env.ProbeDSN).QueryRow(ctx, "SELECT setting::int FROM pg_settings WHERE name = 'track_activity_query_size'").Scan(&size); err != nil {
		t.Fatal(err)
	}
	prefix := stuckSQL + " AND '" + strings.Repeat("y", size-len(stuckSQL)-60) + "' <> '' "
	holds = append(holds, hold(prefix+"/*application='ground-truth',traceparent='00-"+hexID(16)+"-"+hexID(8)+"-01'*/"))
	sum, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	eps := readJSONL[rundir.Episode](t, filepath.Join(runDir, rundir.EpisodesFile))
	got := 0
	for _, e := range eps {
		if e.HoldSeconds < 0.2 {
			continue // idle in transaction after BEGIN, a moment
		}
		i := of(e)
		switch {
		case i < 0:
			t.Errorf("an episode no hold explains: %+v", e)
		case i >= n: // the malformed ones
			if e.TraceID != "" || e.Comment != nil {
				t.Errorf("episode of pid %d read a malformed comment: %s %v", e.PID, e.TraceID, e.Comment)
			}
		default:
			got++
			h := holds[i]
			if e.TraceID != h.traceID || e.SpanID != h.spanID || e.Comment["application"] != "ground-truth" {
				t.Errorf("episode of pid %d: trace %s span %s comment %v; want %s %s", e.PID, e.TraceID, e.SpanID, e.Comment, h.traceID, h.spanID)
			}
			if e.Fingerprint != querytext.Fingerprint(stuckSQL) || strings.Contains(e.Query, "traceparent") {
				t.Errorf("episode of pid %d: fingerprint %q, query %q: want the statement's, without the comment", e.PID, e.Fingerprint, e.Query)
			}
		}
	}
	if got != n {
		t.Errorf("%d of %d ground-truth episodes recorded", got, n)
	}
	if sum.MalformedComments != 2 || sum.FailedSamples != 0 {
		t.Errorf("malformed comments %d (want 2), failed samples %d", sum.MalformedComments, sum.FailedSamples)
	}
}

package forensics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// BenchmarkJoin joins 100,000 stuck episodes to a request index of
// 1,000,000 requests, as the report does: half the episodes by the trace
// id their query carried, half by the bearer token it carried (a service
// without trace context), both reading the files as streams. It reports
// the time of one whole join and the heap it held at its peak, which must
// not grow with the requests (only with the episodes): the same episodes
// against a fifth of the requests hold about as much.
func BenchmarkJoin(b *testing.B) {
	for _, requests := range []int{200_000, 1_000_000} {
		b.Run(fmt.Sprintf("episodes=100k/requests=%dk", requests/1000), func(b *testing.B) { benchJoin(b, requests) })
	}
}

func benchJoin(b *testing.B, requests int) {
	const (
		episodes = 100_000
		users    = 3000
	)
	dir := b.TempDir()
	writeJoinFixture(b, dir, requests, episodes, users)
	b.ResetTimer()
	var peak uint64
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := samplePeakHeap(&peak)
		f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
		if err != nil {
			b.Fatal(err)
		}
		fb := New(dir, &rundir.ProbeSummary{StuckAfterSeconds: 1})
		if _, err := jsonl.Each(f, -1, fb.Add); err != nil {
			b.Fatal(err)
		}
		f.Close()
		res := fb.Finish()
		stop()
		if res.StuckEpisodes != episodes || res.Joined < episodes*9/10 || res.SentByToken != episodes/2 {
			b.Fatalf("joined %d of %d (%d by token of %d carrying one)", res.Joined, res.StuckEpisodes, res.TokenJoined, res.SentByToken)
		}
		peak -= min(peak, before.HeapAlloc)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// samplePeakHeap records the largest heap in use until stop is called.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// writeJoinFixture writes a run directory: requests of users one after
// another (each 50 ms), and episodes that began inside some of them —
// even ones carrying the request's trace id, odd ones its user's token.
func writeJoinFixture(b *testing.B, dir string, requests, episodes, users int) {
	b.Helper()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rf, err := os.Create(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		b.Fatal(err)
	}
	ef, err := os.Create(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		b.Fatal(err)
	}
	rw, ew := bufio.NewWriter(rf), bufio.NewWriter(ef)
	every := requests / episodes
	for i := range requests {
		user := i % users
		start := t0.Add(time.Duration(i/users) * 50 * time.Millisecond)
		r := rundir.Request{TraceID: fmt.Sprintf("%032x", i+1), User: user, Scenario: "s", Iteration: int64(i / users),
			Method: "tools/call", Name: "wait_for_run", Start: start, Seconds: 0.04, Outcome: rundir.RequestOK}
		line, _ := json.Marshal(r)
		rw.Write(append(line, '\n'))
		if i%every != 0 {
			continue
		}
		e := rundir.Episode{PID: int32(i), Start: start.Add(10 * time.Millisecond), HoldSeconds: 2, EndReason: rundir.EndReleased,
			Query: "SELECT ?", Fingerprint: "select ?"}
		if (i/every)%2 == 0 {
			e.TraceID = r.TraceID
		} else {
			e.SentBy = &rundir.SentBy{Token: user, Tokens: users}
		}
		line, _ = json.Marshal(e)
		ew.Write(append(line, '\n'))
	}
	for _, w := range []*bufio.Writer{rw, ew} {
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	rf.Close()
	ef.Close()
}

package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/plots"
)

// writeStreamRun writes a run directory of n samples at 100 ms and
// episodes episodes with every series the plots draw: PgBouncer, the
// service pool every 7th sample with its counters (restarted once), rare
// states, gaps, spikes, a NaN-free but noisy line, and a torn line in the
// middle of each file. With summary false it is a killed run.
func writeStreamRun(t testing.TB, dir string, n, episodes int, summary bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 3))
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	write := func(name string, each func(w *bufio.Writer, enc *json.Encoder)) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		each(w, json.NewEncoder(w))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.SamplesFile, func(w *bufio.Writer, enc *json.Encoder) {
		var waits, canceled float64
		for i := range n {
			if i == n/2 {
				w.WriteString("{\"time\": \"torn\n")
			}
			stuck := (i / 20) % 50
			if rng.IntN(3000) == 0 {
				stuck = 300
			}
			s := rundir.Sample{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), TookSeconds: 0.001,
				States:        rundir.StateCounts{Active: rng.IntN(30), Idle: 500 - stuck, IdleInTx: stuck + rng.IntN(5)},
				StuckIdleInTx: stuck,
				PgBouncer:     &rundir.PoolSample{ClActive: 10 + stuck + rng.IntN(3), ClWaiting: max(stuck-40, 0), MaxWaitSeconds: rng.Float64() * float64(max(stuck-40, 0))}}
			if rng.IntN(500) == 0 {
				s.States.Other = 1 + rng.IntN(3)
			}
			if rng.IntN(700) == 0 {
				s.States.IdleInTxAborted = 1
			}
			if rng.IntN(1000) == 0 {
				s = rundir.Sample{Time: s.Time, Gap: true, Error: "connection refused"}
			}
			if i%7 == 0 {
				waits += float64(rng.IntN(4))
				canceled += float64(rng.IntN(2))
				if i == n*3/4/7*7 {
					waits, canceled = 0, 0 // the service restarted
				}
				s.AppPool = &rundir.AppPoolSample{Acquired: float64(min(stuck+10, 40)), Total: float64(30 + rng.IntN(10)), Max: 40,
					AcquireWaitsTotal: waits, CanceledAcquiresTotal: canceled, UnclosedSessions: float64(stuck / 10)}
			}
			if err := enc.Encode(&s); err != nil {
				t.Fatal(err)
			}
		}
	})
	end := t0.Add(time.Duration(n) * 100 * time.Millisecond)
	write(rundir.EpisodesFile, func(w *bufio.Writer, enc *json.Encoder) {
		for i := range episodes {
			if i == episodes/3 {
				w.WriteString("{\"pid\": 1\n")
			}
			start := t0.Add(time.Duration(rng.Int64N(int64(end.Sub(t0)))))
			hold, reason := rng.ExpFloat64()*0.2, rundir.EndReleased
			switch {
			case i%9 == 0:
				hold, reason = 5+rng.Float64(), rundir.EndTimeout
			case i%13 == 0:
				hold = 1 + rng.Float64()*3 // a slow release
			}
			e := rundir.Episode{PID: int32(100 + i%300), Start: start, End: start.Add(time.Duration(hold * float64(time.Second))),
				HoldSeconds: hold, EndReason: reason, Query: "SELECT 1 FROM t WHERE id = 42", ApplicationName: "gateway"}
			if err := enc.Encode(&e); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !summary {
		return
	}
	ps := probes.Summarize(probes.Config{Interval: 100 * time.Millisecond, StuckAfter: time.Second}, 5*time.Second, nil, nil)
	write(rundir.SummaryFile, func(_ *bufio.Writer, enc *json.Encoder) {
		if err := enc.Encode(&rundir.Summary{SchemaVersion: rundir.SchemaVersion, Name: "stream", Started: t0, Ended: end, EndReason: rundir.EndCompleted,
			Environment: rundir.Environment{IdleInTxTimeoutSeconds: 5}, Probe: &ps}); err != nil {
			t.Fatal(err)
		}
	})
}

// loadWhole reads a run directory as LoadRun did before it streamed:
// every sample and episode in memory, the summary rebuilt and the pool and
// forensics derived from the slices.
func loadWhole(t *testing.T, dir string) *Run {
	t.Helper()
	r := &Run{Dir: dir}
	if raw, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile)); err == nil {
		if r.Summary, err = decodeSummary(dir, raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct {
		name string
		read func(*os.File) (int, error)
	}{
		{rundir.SamplesFile, func(f *os.File) (int, error) { return jsonl.Read(f, &r.Samples) }},
		{rundir.EpisodesFile, func(f *os.File) (int, error) { return jsonl.Read(f, &r.Episodes) }},
	} {
		fh, err := os.Open(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.read(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if r.Summary == nil || r.Summary.Incomplete {
		r.Summary = rebuildSummary(r)
	}
	deriveRun(r)
	return r
}

// TestStreamedRunDrawsTheSame: a long run read by LoadRun (samples
// reduced to what the plots draw, episodes binned, only the worst kept)
// has the same summary — pool verdict, rebuilt probe summary, forensics —
// and draws every plot byte for byte as the run read whole does.
func TestStreamedRunDrawsTheSame(t *testing.T) {
	n, episodes := 30_000, 3*maxRunEpisodes
	if testing.Short() {
		n, episodes = 12_000, maxRunEpisodes+500
	}
	for _, finished := range []bool{true, false} {
		name := "finished"
		if !finished {
			name = "killed"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeStreamRun(t, dir, n, episodes, finished)
			whole := loadWhole(t, dir)
			streamed, err := LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if streamed.SampleCount != len(whole.Samples) || streamed.EpisodeCount != len(whole.Episodes) {
				t.Fatalf("counts %d samples, %d episodes; want %d, %d", streamed.SampleCount, streamed.EpisodeCount, len(whole.Samples), len(whole.Episodes))
			}
			t.Logf("kept %d of %d samples", len(streamed.Samples), len(whole.Samples))
			if len(streamed.Samples) >= len(whole.Samples) || len(streamed.Episodes) != maxRunEpisodes {
				t.Errorf("kept %d of %d samples, %d of %d episodes", len(streamed.Samples), len(whole.Samples), len(streamed.Episodes), len(whole.Episodes))
			}
			if len(streamed.Notes) != 2 {
				t.Errorf("notes %q, want the torn line of each file", streamed.Notes)
			}
			got, _ := json.MarshalIndent(streamed.Summary, "", " ")
			want, _ := json.MarshalIndent(whole.Summary, "", " ")
			if !bytes.Equal(got, want) {
				t.Errorf("summary differs:\n%s\nwant\n%s", got, want)
			}
			if !whole.Summary.Pool.Exhausted || whole.Summary.Forensics == nil || whole.Summary.Forensics.Leaked == 0 {
				t.Fatalf("the made-up run should exhaust its pool and leak: %+v %+v", whole.Summary.Pool, whole.Summary.Forensics)
			}
			names := plots.Names(whole.PlotRun())
			if want := []string{plots.Stuck, plots.States, plots.Release, plots.PgBouncer, plots.AppPool}; !slices.Equal(names, want) { // all but load
				t.Errorf("plots %q, want %q", names, want)
			}
			for _, p := range names {
				var a, b bytes.Buffer
				if err := plots.Write(&a, p, plots.SVG, streamed.PlotRun()); err != nil {
					t.Fatal(err)
				}
				if err := plots.Write(&b, p, plots.SVG, whole.PlotRun()); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("plot %s differs from the one drawn from every record (%d vs %d bytes)", p, a.Len(), b.Len())
				}
			}
		})
	}
}

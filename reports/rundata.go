package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/plots"
)

// Sample is one line of samples.jsonl, as the probe writes it, the
// service's own pool (AppPool) and probe gaps (Gap) included.
type Sample = probes.Sample

// AppPoolSample is the service's own connection pool as its metrics
// endpoint reported it; the *Total fields are counters since the service
// started.
type AppPoolSample = probes.AppPoolSample

// Run is a run directory read back: the summary and the time series the
// run recorded. Slices are empty when their file is absent.
//
// LoadRun keeps what the report draws, not every record of a long run:
// Samples holds every sample of samples.jsonl when there are at most 4,000
// of them; of a longer run only those its plots draw (plots.Keeper): the
// first and last sample, and of each plotted line in each of the plots'
// time buckets the samples with its first, lowest, highest and last value. Episodes holds every episode of
// episodes.jsonl up to maxRunEpisodes (10,000); of a run with more, the
// 10,000 held longest. SampleCount and EpisodeCount say how many the
// files held; the summary, pool verdict and forensics are computed from
// all of them.
type Run struct {
	Dir     string
	Summary *Summary
	// Samples and Episodes come from samples.jsonl and episodes.jsonl;
	// Load from load.jsonl.
	Samples    []Sample
	Episodes   []probes.Episode
	Load       []rundir.LoadPoint
	Thresholds []rundir.Threshold
	// SampleCount and EpisodeCount are how many samples and episodes the
	// run recorded; 0 when the Run was not read by LoadRun (then Samples
	// and Episodes are all of them).
	SampleCount, EpisodeCount int
	// LoadEndReason and DroppedIterations are the engine's, when recorded.
	LoadEndReason     string
	DroppedIterations int64
	// Notes say what was missing or damaged in the directory.
	Notes []string

	// rates are the plotted service pool counter rates of a run whose
	// Samples were reduced; holds the release latency histogram of all its
	// episodes.
	rates *plots.Rates
	holds *plots.Holds
}

// sampleCount is how many samples the run recorded.
func (r *Run) sampleCount() int { return max(r.SampleCount, len(r.Samples)) }

// PlotRun is the run as package plots draws it:
//
//	err := plots.Write(w, plots.Stuck, plots.PNG, run.PlotRun())
func (r *Run) PlotRun() *plots.Run {
	return &plots.Run{Label: r.Label(), Summary: r.Summary, Samples: r.Samples, Episodes: r.Episodes, Load: r.Load,
		SampleCount: r.SampleCount, Holds: r.holds, Rates: r.rates}
}

// plotRuns are runs as package plots draws them.
func plotRuns(runs ...*Run) []*plots.Run {
	out := make([]*plots.Run, len(runs))
	for i, r := range runs {
		out[i] = r.PlotRun()
	}
	return out
}

// Incomplete reports whether the run never wrote its summary (it was
// killed), so its report is rebuilt from what the probe had appended.
func (r *Run) Incomplete() bool { return r.Summary.Incomplete }

// Label names the run in reports: "before (commit-in-finally)".
// columnName is what a sign-off or compare calls a run in its columns:
// the reference gateway's variant, or, for the user's own service (no
// variant), the run's own name.
func columnName(s *Summary) string {
	if s.Environment.Variant != "" {
		return s.Environment.Variant
	}
	if s.Name != "" {
		return s.Name
	}
	return "—"
}

func (r *Run) Label() string {
	name := r.Summary.Name
	if name == "" {
		name = filepath.Base(r.Dir)
	}
	if v := r.Summary.Environment.Variant; v != "" {
		return name + " (" + v + ")"
	}
	return name
}

// LoadRun reads a run directory. A directory without summary.json whose
// probe files exist is a run that was killed: it is read as far as it goes
// (a torn last line is skipped) and marked incomplete. A directory with
// none of a run's files is ErrNotRun.
func LoadRun(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: %w (it is a file)", dir, ErrNotRun)
	}
	r := &Run{Dir: dir}
	var raw []byte
	raw, err = os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	switch {
	case err == nil:
		r.Summary, err = decodeSummary(dir, raw)
		if err != nil {
			return nil, err
		}
		if l := r.Summary.Load; l != nil {
			r.Thresholds = l.Thresholds
			r.LoadEndReason = l.EndReason
			r.DroppedIterations = l.DroppedIterations
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("read %s: %w", rundir.SummaryFile, err)
	}
	found := r.Summary != nil
	var mu sync.Mutex // found and r.Notes: two files are read at once below
	read := func(name string, read func(io.Reader) (int, error)) error {
		fh, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		mu.Lock()
		found = true
		mu.Unlock()
		bad, err := read(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		if bad > 0 {
			mu.Lock()
			r.Notes = append(r.Notes, fmt.Sprintf("%s: skipped %d unreadable line(s) (a torn write when the run was killed)", name, bad))
			mu.Unlock()
		}
		return nil
	}
	// A killed run's summary is rebuilt from the records as they are read.
	var rb *rebuilder
	if r.Summary == nil || r.Summary.Incomplete {
		rb = newRebuilder(dir, r.Summary)
	}
	// What the records are judged by does not depend on them: the
	// summary's settings (a rebuilt summary's are known before).
	settings := r.Summary
	if rb != nil {
		settings = &Summary{Probe: rb.probe()}
	}
	pool := newPoolAcc(settings)
	kept := plots.NewKeeper()
	readSamples := func() error {
		return read(rundir.SamplesFile, func(rd io.Reader) (int, error) {
			return jsonl.Each(rd, -1, func(s *Sample) {
				pool.add(s)
				kept.Add(s)
				if rb != nil {
					rb.addSample(s)
				}
			})
		})
	}
	stuckAfter := 0.0
	if settings.Probe != nil {
		stuckAfter = settings.Probe.StuckAfterSeconds
	}
	r.holds = plots.NewHolds(stuckAfter)
	fb := forensics.New(dir, settings.Probe)
	worst := &worstEpisodes{n: maxRunEpisodes}
	readEpisodes := func() error {
		return read(rundir.EpisodesFile, func(rd io.Reader) (int, error) {
			return jsonl.Each(rd, -1, func(e *probes.Episode) {
				r.EpisodeCount++
				r.holds.Add(e.HoldSeconds)
				fb.Add(e)
				worst.add(e)
				if rb != nil {
					rb.addEpisode(e)
				}
			})
		})
	}
	// The two largest files are decoded side by side — an hour's soak
	// holds hundreds of MB of episodes — unless a killed run's summary
	// is being rebuilt from both, in the order they were written.
	if rb == nil {
		var sampleErr error
		var wg sync.WaitGroup
		wg.Go(func() { sampleErr = readSamples() })
		err = readEpisodes()
		wg.Wait()
		err = errors.Join(sampleErr, err)
	} else if err = readSamples(); err == nil {
		err = readEpisodes()
	}
	if err != nil {
		return nil, err
	}
	r.Episodes = worst.episodes()
	if err := read(rundir.LoadFile, func(rd io.Reader) (int, error) { return jsonl.Read(rd, &r.Load) }); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: %w: no %s, %s or %s", dir, ErrNotRun, rundir.SummaryFile, rundir.SamplesFile, rundir.EpisodesFile)
	}
	if rb != nil {
		r.Summary = rb.done(r.Load)
	}
	// derive, from the stream.
	r.SampleCount = pool.n
	if pool.n > 0 {
		r.Summary.Pool = pool.done(intervalFrom(r.Summary, pool.n, pool.firstTime, pool.lastTime), r.Load)
		r.Summary.Pool.PinnedAllowed = pinnedAllowedBy(dir)
	}
	if r.EpisodeCount > 0 || r.Summary.Probe != nil {
		r.Summary.Forensics = finishForensics(fb, r.Summary) // after the pool: it reads Summary.Pool
	}
	// A long run's plots need only some of its samples: they are read again.
	path := filepath.Join(dir, rundir.SamplesFile)
	r.Samples, r.rates, err = kept.Samples(r.PlotRun(), func(n int, each func(*Sample)) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = jsonl.Each(f, n, each)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func decodeSummary(dir string, raw []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%w); move it away and the report is rebuilt from the probe's %s and %s, marked incomplete",
			filepath.Join(dir, rundir.SummaryFile), err, rundir.SamplesFile, rundir.EpisodesFile)
	}
	if s.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s has schema version %d; this leakbench reads version %d", filepath.Join(dir, rundir.SummaryFile), s.SchemaVersion, SchemaVersion)
	}
	return &s, nil
}

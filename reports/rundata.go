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
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/derive"
	"github.com/leakbench/leakbench/reports/forensics"
	"github.com/leakbench/leakbench/reports/plots"
)

// Reading a run directory in memory that does not grow with the run: a
// day of 100 ms samples at a thousand connections, with a million
// episodes, renders in about what an hour does (BenchmarkReportDay).
//
// samples.jsonl is read once for what needs every sample exactly (the
// pool verdict, the rebuilt summary of a killed run, counts) and, when the
// run has more samples than its plots draw whole (more than 4,000), a
// second time for the samples the plots need (plots.Keeper), which draw
// exactly as all of them would. episodes.jsonl is read once: the
// release-latency histogram (plots.Holds), the forensics and the summary
// take each episode as it comes, and only the worst episodes are kept
// whole.

// maxRunEpisodes bounds Run.Episodes: a run with more keeps its
// maxRunEpisodes worst (longest held) episodes whole.
const maxRunEpisodes = 10_000

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
	Summary *rundir.Summary
	// Samples and Episodes come from samples.jsonl and episodes.jsonl;
	// Load from load.jsonl.
	Samples    []rundir.Sample
	Episodes   []rundir.Episode
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
func columnName(s *rundir.Summary) string {
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
	var rb *derive.Rebuilder
	if r.Summary == nil || r.Summary.Incomplete {
		rb = derive.NewRebuilder(dir, r.Summary)
	}
	// What the records are judged by does not depend on them: the
	// summary's settings (a rebuilt summary's are known before).
	settings := r.Summary
	if rb != nil {
		settings = &rundir.Summary{Probe: rb.Probe()}
	}
	pool := derive.NewPool(settings)
	kept := plots.NewKeeper()
	readSamples := func() error {
		return read(rundir.SamplesFile, func(rd io.Reader) (int, error) {
			return jsonl.Each(rd, -1, func(s *rundir.Sample) {
				pool.Add(s)
				kept.Add(s)
				if rb != nil {
					rb.AddSample(s)
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
	worst := derive.NewWorst(maxRunEpisodes)
	readEpisodes := func() error {
		return read(rundir.EpisodesFile, func(rd io.Reader) (int, error) {
			return jsonl.Each(rd, -1, func(e *rundir.Episode) {
				r.EpisodeCount++
				r.holds.Add(e.HoldSeconds)
				fb.Add(e)
				worst.Add(e)
				if rb != nil {
					rb.AddEpisode(e)
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
	r.Episodes = worst.Episodes()
	if err := read(rundir.LoadFile, func(rd io.Reader) (int, error) { return jsonl.Read(rd, &r.Load) }); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: %w: no %s, %s or %s", dir, ErrNotRun, rundir.SummaryFile, rundir.SamplesFile, rundir.EpisodesFile)
	}
	if rb != nil {
		r.Summary = rb.Done(r.Load)
	}
	// derive, from the stream.
	r.SampleCount = pool.Count()
	if pool.Count() > 0 {
		first, last := pool.Span()
		r.Summary.Pool = pool.Done(derive.Interval(r.Summary, pool.Count(), first, last), r.Load)
		r.Summary.Pool.PinnedAllowed = derive.PinnedAllowed(dir)
	}
	if r.EpisodeCount > 0 || r.Summary.Probe != nil {
		r.Summary.Forensics = derive.Forensics(fb, r.Summary) // after the pool: it reads Summary.Pool
	}
	// A long run's plots need only some of its samples: they are read again.
	path := filepath.Join(dir, rundir.SamplesFile)
	r.Samples, r.rates, err = kept.Samples(r.PlotRun(), func(n int, each func(*rundir.Sample)) error {
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

func decodeSummary(dir string, raw []byte) (*rundir.Summary, error) {
	var s rundir.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%w); move it away and the report is rebuilt from the probe's %s and %s, marked incomplete",
			filepath.Join(dir, rundir.SummaryFile), err, rundir.SamplesFile, rundir.EpisodesFile)
	}
	if s.SchemaVersion != rundir.SchemaVersion {
		return nil, fmt.Errorf("%s has schema version %d; this leakbench reads version %d", filepath.Join(dir, rundir.SummaryFile), s.SchemaVersion, rundir.SchemaVersion)
	}
	return &s, nil
}

// derivePool sets s.Pool from dir's samples.jsonl, as LoadRun does, so
// that a summary written before the report is rendered already says
// whether a pool ran dry. Without samples s.Pool stays as it is. The
// samples are read as a stream.
func derivePool(dir string, s *rundir.Summary) {
	if _, p, err := derive.ReadPool(dir, s); err == nil && p != nil {
		s.Pool = p
	}
	deriveForensics(&Run{Dir: dir, Summary: s})
}

// deriveForensics sets r.Summary.Forensics from the episodes read.
func deriveForensics(r *Run) {
	if len(r.Episodes) == 0 && r.Summary.Probe == nil {
		return
	}
	fb := forensics.New(r.Dir, r.Summary.Probe)
	for i := range r.Episodes {
		fb.Add(&r.Episodes[i])
	}
	r.Summary.Forensics = derive.Forensics(fb, r.Summary)
}

// deriveRun fills what the report computes from the time series.
func deriveRun(r *Run) {
	if len(r.Samples) > 0 {
		r.Summary.Pool = derive.PoolState(r.Summary, r.Samples, r.Load, intervalOf(r))
	}
	deriveForensics(r) // after the pool: it reads Summary.Pool
}

func intervalOf(r *Run) float64 {
	if len(r.Samples) == 0 {
		return derive.Interval(r.Summary, 0, time.Time{}, time.Time{})
	}
	return derive.Interval(r.Summary, r.sampleCount(), r.Samples[0].Time, r.Samples[len(r.Samples)-1].Time)
}

// rebuildSummary makes the summary of a run read into memory that never
// wrote one.
func rebuildSummary(r *Run) *rundir.Summary {
	b := derive.NewRebuilder(r.Dir, r.Summary)
	for i := range r.Samples {
		b.AddSample(&r.Samples[i])
	}
	for i := range r.Episodes {
		b.AddEpisode(&r.Episodes[i])
	}
	return b.Done(r.Load)
}

package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
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
type Run struct {
	Dir     string
	Summary *Summary
	// Samples and Episodes come from samples.jsonl and episodes.jsonl;
	// Load from load.jsonl.
	Samples    []Sample
	Episodes   []probes.Episode
	Load       []rundir.LoadPoint
	Thresholds []rundir.Threshold
	// LoadEndReason and DroppedIterations are the engine's, when recorded.
	LoadEndReason     string
	DroppedIterations int64
	// Notes say what was missing or damaged in the directory.
	Notes []string
}

// Incomplete reports whether the run never wrote its summary (it was
// killed), so its report is rebuilt from what the probe had appended.
func (r *Run) Incomplete() bool { return r.Summary.Incomplete }

// Label names the run in reports: "before (commit-in-finally)".
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
	for _, f := range []struct {
		name string
		read func(io.Reader) (int, error)
	}{
		{rundir.SamplesFile, func(rd io.Reader) (int, error) { return readJSONL(rd, &r.Samples) }},
		{rundir.EpisodesFile, func(rd io.Reader) (int, error) { return readJSONL(rd, &r.Episodes) }},
		{rundir.LoadFile, func(rd io.Reader) (int, error) { return readJSONL(rd, &r.Load) }},
	} {
		fh, err := os.Open(filepath.Join(dir, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", f.name, err)
		}
		found = true
		bad, err := f.read(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
		}
		if bad > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: skipped %d unreadable line(s) (a torn write when the run was killed)", f.name, bad))
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: %w: no %s, %s or %s", dir, ErrNotRun, rundir.SummaryFile, rundir.SamplesFile, rundir.EpisodesFile)
	}
	if r.Summary == nil || r.Summary.Incomplete {
		r.Summary = rebuildSummary(r)
	}
	derive(r)
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

// maxLine bounds one JSON line (a sample with a long query is a few KB).
const maxLine = 4 << 20

// readJSONL appends one value per line to *dst. Lines that do not decode
// are counted, not fatal: a killed run may leave its last line half
// written.
func readJSONL[T any](rd io.Reader, dst *[]T) (bad int, err error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) != nil {
			bad++
			continue
		}
		*dst = append(*dst, v)
	}
	return bad, sc.Err()
}

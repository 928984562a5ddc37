package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// summary.json's types are the run directory's (package rundir owns the
// format); these are the reports' names for them.
type (
	// Summary is one run's summary.json.
	Summary = rundir.Summary
	// Environment records what the run ran against.
	Environment = rundir.Environment
	// PoolState is the verdict on the connection pools (rundir.PoolState).
	PoolState = rundir.PoolState
	// Forensics is summary.json's forensics section (rundir.Forensics):
	// package forensics makes it.
	Forensics = rundir.Forensics
)

// SchemaVersion is the version of summary.json and compare.json.
const SchemaVersion = rundir.SchemaVersion

// How a run ended (Summary.EndReason).
const (
	EndCompleted   = rundir.EndCompleted
	EndInterrupted = rundir.EndInterrupted
	EndFailed      = rundir.EndFailed
	EndIncomplete  = rundir.EndIncomplete
)

// WriteRun writes summary.json and report.md into dir, with the pool
// state derived from the samples the probe recorded there (s.Pool is set).
// Each file is written to a temporary file and renamed, so a reader never
// sees half of it.
func WriteRun(dir string, s *Summary) error {
	s.SchemaVersion = SchemaVersion
	derivePool(dir, s)
	deriveForensicsFromDir(dir, s) // after the pool: it reads s.Pool
	if s.Environment.LeakbenchCommit == "" {
		s.Environment.LeakbenchCommit = buildCommit()
	}
	if err := writeJSON(filepath.Join(dir, rundir.SummaryFile), s); err != nil {
		return err
	}
	return rundir.WriteFileFunc(filepath.Join(dir, rundir.ReportFile), func(w io.Writer) error { return WriteSummaryMarkdown(w, s) })
}

// ErrNotRun means a directory holds no leakbench run.
var ErrNotRun = errors.New("not a leakbench run directory")

// ReadRun reads a run directory's summary.json. LoadRun reads the whole
// directory, also when the run was killed before it wrote a summary.
func ReadRun(dir string) (*Summary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s; was the run killed before it finished?)", dir, ErrNotRun, rundir.SummaryFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.SummaryFile, err)
	}
	return decodeSummary(dir, raw)
}

func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

func writeJSON(path string, v any) error {
	return rundir.WriteFileFunc(path, func(f io.Writer) error {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

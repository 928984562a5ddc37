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
	"github.com/leakbench/leakbench/reports/derive"
)

// WriteRun writes summary.json and report.md into dir, with the pool
// state derived from the samples the probe recorded there (s.Pool is set).
// Each file is written to a temporary file and renamed, so a reader never
// sees half of it.
func WriteRun(dir string, s *rundir.Summary) error {
	s.SchemaVersion = rundir.SchemaVersion
	derivePool(dir, s)
	derive.ForensicsFromDir(dir, s) // after the pool: it reads s.Pool
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
func ReadRun(dir string) (*rundir.Summary, error) {
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

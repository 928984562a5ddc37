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
	"time"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
)

// SchemaVersion is the version of summary.json and compare.json. It changes
// when a field changes meaning or disappears; adding a field keeps it.
const SchemaVersion = 1

// How a run ended.
const (
	EndCompleted   = "completed"
	EndInterrupted = "interrupted"
	EndFailed      = "failed"
	// EndIncomplete: the run wrote no summary (it was killed); the report
	// was rebuilt from the probe's files.
	EndIncomplete = "incomplete"
)

// Environment records what the run ran against.
type Environment struct {
	Provider               string  `json:"provider"`
	Variant                string  `json:"variant"`
	PostgresVersion        string  `json:"postgres_version"`
	PgBouncerVersion       string  `json:"pgbouncer_version"`
	IdleInTxTimeoutSeconds float64 `json:"idle_in_transaction_session_timeout_seconds"`
	MaxConnections         int     `json:"max_connections"`
	PoolMode               string  `json:"pool_mode"`
	PgBouncerPoolSize      int     `json:"pgbouncer_pool_size"`
	GatewayPoolSize        int     `json:"gateway_pool_size"`
	Target                 string  `json:"target"`
	LeakbenchVersion       string  `json:"leakbench_version"`
	// LeakbenchCommit is the VCS revision leakbench was built from, when
	// the build recorded one.
	LeakbenchCommit string `json:"leakbench_commit,omitempty"`
}

// Summary is one run's summary.json.
type Summary struct {
	SchemaVersion int                `json:"schema_version"`
	Name          string             `json:"name"`
	Profile       string             `json:"profile"`
	Started       time.Time          `json:"started"`
	Ended         time.Time          `json:"ended"`
	EndReason     string             `json:"end_reason"`
	Error         string             `json:"error,omitempty"`
	Environment   Environment        `json:"environment"`
	Probe         *probes.Summary    `json:"probe"`
	Load          *rundir.LoadResult `json:"load"`
	// Incomplete: the run was killed before it wrote its summary; this one
	// was rebuilt by the report from the probe's files.
	Incomplete bool `json:"incomplete,omitempty"`
	// Pool is the verdict on the connection pools, derived from the
	// samples by the report.
	Pool *PoolState `json:"pool,omitempty"`
}

// WriteRun writes summary.json and report.md into dir, with the pool
// state derived from the samples the probe recorded there (s.Pool is set).
// Each file is written to a temporary file and renamed, so a reader never
// sees half of it.
func WriteRun(dir string, s *Summary) error {
	s.SchemaVersion = SchemaVersion
	derivePool(dir, s)
	if s.Environment.LeakbenchCommit == "" {
		s.Environment.LeakbenchCommit = buildCommit()
	}
	if err := writeJSON(filepath.Join(dir, rundir.SummaryFile), s); err != nil {
		return err
	}
	return rundir.WriteFileFunc(filepath.Join(dir, rundir.ReportFile), s.WriteMarkdown)
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

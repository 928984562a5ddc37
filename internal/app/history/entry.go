package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Format names a history entry; FormatVersion is the version this package
// writes and the only one it reads. It changes when a field changes meaning
// or disappears; adding a field keeps it.
const (
	Format        = "leakbench-history"
	FormatVersion = 1
)

// Kinds of entries.
const (
	KindRun     = "run"
	KindSignoff = "signoff"
)

// Entry is one result in a history directory. FORMAT.md documents every
// field.
type Entry struct {
	Format        string    `json:"format"`
	FormatVersion int       `json:"format_version"`
	ID            string    `json:"id"`
	Recorded      time.Time `json:"recorded"`
	Kind          string    `json:"kind"`
	// Release names the build of the service under test: --release,
	// $LEAKBENCH_RELEASE, `git describe` of the working directory, or
	// "unknown"; ReleaseSource says which.
	Release       string `json:"release"`
	ReleaseSource string `json:"release_source"`
	Leakbench     Tool   `json:"leakbench"`
	Profile       string `json:"profile"`
	// Pass is the entry's verdict: the run's or sign-off's checks passed
	// and, when a baseline was compared, nothing regressed. Only passing
	// entries are baselines for "last".
	Pass bool `json:"pass"`
	// VerdictPass is the run's or sign-off's own verdict, before any
	// baseline comparison.
	VerdictPass bool          `json:"verdict_pass"`
	Checks      []Check       `json:"checks"`
	Environment Environment   `json:"environment"`
	Figures     Figures       `json:"figures"`
	Before      *Figures      `json:"before,omitempty"`
	Baseline    *BaselineInfo `json:"baseline,omitempty"`
	RunDir      string        `json:"run_dir,omitempty"`
	// Summary is the run's summary.json (the after run's in a sign-off),
	// as written, with secrets redacted once more.
	Summary json.RawMessage `json:"summary,omitempty"`
}

// Tool is the leakbench that recorded the entry.
type Tool struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// Check is one verdict item, as in compare.json.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail"`
}

// Environment is what the run ran against and where.
type Environment struct {
	Provider               string  `json:"provider"`
	Variant                string  `json:"variant"`
	VariantBefore          string  `json:"variant_before,omitempty"`
	PostgresVersion        string  `json:"postgres_version"`
	PgBouncerVersion       string  `json:"pgbouncer_version"`
	PoolMode               string  `json:"pool_mode"`
	PgBouncerPoolSize      int     `json:"pgbouncer_pool_size"`
	GatewayPoolSize        int     `json:"gateway_pool_size"`
	MaxConnections         int     `json:"max_connections"`
	IdleInTxTimeoutSeconds float64 `json:"idle_in_transaction_session_timeout_seconds"`
	Target                 string  `json:"target"`
	OS                     string  `json:"os"`
	Arch                   string  `json:"arch"`
	CPUs                   int     `json:"cpus"`
	CI                     string  `json:"ci,omitempty"`
}

// Figures are the key figures of one run.
type Figures struct {
	EndReason          string  `json:"end_reason"`
	ProbeRecorded      bool    `json:"probe_recorded"`
	Episodes           int     `json:"episodes"`
	ReleaseP50Seconds  float64 `json:"release_p50_seconds"`
	ReleaseP99Seconds  float64 `json:"release_p99_seconds"`
	ReleaseMaxSeconds  float64 `json:"release_max_seconds"`
	LongestHoldSeconds float64 `json:"longest_hold_seconds"`
	MaxStuckIdleInTx   int     `json:"max_stuck_idle_in_tx"`
	StuckEpisodes      int     `json:"stuck_episodes"`
	TimeoutTerminated  int     `json:"timeout_terminated"`

	PoolExhausted             bool    `json:"pool_exhausted"`
	PoolReason                string  `json:"pool_reason,omitempty"`
	PoolWorstWaitSeconds      float64 `json:"pool_worst_wait_seconds"`
	PgBouncerMaxClWaiting     int     `json:"pgbouncer_max_cl_waiting"`
	AppPoolAcquireWaits       float64 `json:"app_pool_acquire_waits"`
	AppPoolAcquireWaitSeconds float64 `json:"app_pool_acquire_wait_seconds"`
	AppPoolSaturatedSeconds   float64 `json:"app_pool_saturated_seconds"`
	// PoolPinnedSeconds is the longest time a pool sat pinned: the
	// database's view (a service's connections at their most, none of
	// them working) or the service's own pool at its max with acquires
	// waiting, whichever is longer.
	PoolPinnedSeconds float64 `json:"pool_pinned_seconds"`

	LoadRecorded  bool    `json:"load_recorded"`
	Requests      int64   `json:"requests"`
	RequestRate   float64 `json:"request_rate_per_second"`
	ErrorRate     float64 `json:"error_rate"`
	LatencyP95Ms  float64 `json:"latency_p95_ms"`
	LatencyP99Ms  float64 `json:"latency_p99_ms"`
	LoadEndReason string  `json:"load_end_reason,omitempty"`
}

// BaselineInfo records the comparison with a baseline.
type BaselineInfo struct {
	// Requested is what --baseline asked for: "last" or an ID.
	Requested string `json:"requested"`
	// ID and Release name the baseline entry; empty when none was found.
	ID      string  `json:"id,omitempty"`
	Release string  `json:"release,omitempty"`
	Note    string  `json:"note,omitempty"`
	Deltas  []Delta `json:"deltas,omitempty"`
	// Regressed is true when some delta regressed.
	Regressed bool `json:"regressed"`
}

// ErrSummary means a summary.json could not be read.
var ErrSummary = errors.New("bad summary.json")

// summaryDoc is summary.json as the run directory's owner declares it.
type summaryDoc rundir.Summary

// readSummary decodes a summary.json of schema version 1.
func readSummary(raw []byte) (*summaryDoc, error) {
	var d summaryDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSummary, err)
	}
	if d.SchemaVersion != rundir.SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %d, history reads %d", ErrSummary, d.SchemaVersion, rundir.SchemaVersion)
	}
	return &d, nil
}

// FiguresOf reads the key figures from a summary.json.
func FiguresOf(summaryJSON []byte) (Figures, error) {
	d, err := readSummary(summaryJSON)
	if err != nil {
		return Figures{}, err
	}
	return d.figures(), nil
}

func (d *summaryDoc) figures() Figures {
	f := Figures{EndReason: d.EndReason}
	if p := d.Probe; p != nil {
		f.ProbeRecorded = true
		f.Episodes = p.Episodes
		f.ReleaseP50Seconds, f.ReleaseP99Seconds, f.ReleaseMaxSeconds = p.ReleaseP50Seconds, p.ReleaseP99Seconds, p.ReleaseMaxSeconds
		f.LongestHoldSeconds = p.LongestHoldSeconds
		f.MaxStuckIdleInTx, f.StuckEpisodes, f.TimeoutTerminated = p.MaxStuckIdleInTx, p.StuckEpisodes, p.TimeoutTerminated
		f.PoolWorstWaitSeconds = p.PgBouncerMaxWaitSeconds
		f.PgBouncerMaxClWaiting = p.PgBouncerMaxClWaiting
		f.AppPoolAcquireWaits, f.AppPoolAcquireWaitSeconds = p.AppPoolAcquireWaits, p.AppPoolAcquireWaitSeconds
		f.AppPoolSaturatedSeconds = p.AppPoolSaturatedSeconds
	}
	// The report's pool verdict, derived from the samples, wins over the
	// probe's raw figures when it is there.
	if p := d.Pool; p != nil {
		f.PoolExhausted, f.PoolReason = p.Exhausted, redact.String(p.Reason)
		f.PoolWorstWaitSeconds = p.WorstWaitSeconds
		f.PgBouncerMaxClWaiting = p.PgBouncerMaxClWaiting
		f.AppPoolAcquireWaits, f.AppPoolAcquireWaitSeconds = p.AppPoolAcquireWaits, p.AppPoolAcquireWaitSeconds
		f.AppPoolSaturatedSeconds = p.AppPoolSaturatedSeconds
		for _, sc := range p.Services {
			f.PoolPinnedSeconds = max(f.PoolPinnedSeconds, sc.PinnedSeconds)
		}
	}
	if f.AppPoolAcquireWaits > 0 {
		f.PoolPinnedSeconds = max(f.PoolPinnedSeconds, f.AppPoolSaturatedSeconds)
	}
	if l := d.Load; l != nil {
		f.LoadRecorded = true
		f.Requests = l.Requests
		if s := l.Ended.Sub(l.Started).Seconds(); s > 0 {
			f.RequestRate = float64(l.Requests) / s
		}
		// As the report computes it: failures over the requests that got
		// an answer or timed out (not aborted on purpose, not canceled).
		if n := l.Requests - l.ErrorsByKind["canceled"] - l.ErrorsByKind["aborted"]; n > 0 {
			f.ErrorRate = float64(l.Failures) / float64(n)
		}
		if all, ok := l.Latency["all"]; ok && all.Count > 0 {
			f.LatencyP95Ms, f.LatencyP99Ms = all.P95Ms, all.P99Ms
		}
		f.LoadEndReason = l.EndReason
	}
	return f
}

// FiguresOfSummary are the key figures of a summary already decoded.
func FiguresOfSummary(s *rundir.Summary) Figures {
	if s == nil {
		return Figures{}
	}
	return (*summaryDoc)(s).figures()
}

// NewEntry makes an entry of kind from a run's summary.json (the after
// run's in a sign-off): its figures, profile, environment and leakbench's
// version, with the summary kept, redacted. The caller sets the verdict,
// the checks and the release.
func NewEntry(kind string, summaryJSON []byte) (*Entry, error) {
	d, err := readSummary(summaryJSON)
	if err != nil {
		return nil, err
	}
	env := d.Environment
	e := &Entry{
		Format: Format, FormatVersion: FormatVersion, Kind: kind,
		Release: "unknown", ReleaseSource: ReleaseUnknown,
		Leakbench: Tool{Version: env.LeakbenchVersion, Commit: env.LeakbenchCommit},
		Profile:   d.Profile,
		Environment: Environment{
			Provider: env.Provider, Variant: env.Variant,
			PostgresVersion: env.PostgresVersion, PgBouncerVersion: env.PgBouncerVersion,
			PoolMode: env.PoolMode, PgBouncerPoolSize: env.PgBouncerPoolSize, GatewayPoolSize: env.GatewayPoolSize,
			MaxConnections: env.MaxConnections, IdleInTxTimeoutSeconds: env.IdleInTxTimeoutSeconds,
			Target: redact.URL(env.Target),
			OS:     runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), CI: detectCI(),
		},
		Figures: d.figures(),
	}
	// Summaries hold no secret by design; redact once more all the same,
	// and keep the summary only when that leaves valid JSON.
	if red := []byte(redact.String(string(summaryJSON))); json.Valid(red) {
		e.Summary = compact(red)
	}
	return e, nil
}

// SetBefore records the before run of a sign-off from its summary.json.
func (e *Entry) SetBefore(summaryJSON []byte) error {
	d, err := readSummary(summaryJSON)
	if err != nil {
		return fmt.Errorf("before: %w", err)
	}
	f := d.figures()
	e.Before = &f
	e.Environment.VariantBefore = d.Environment.Variant
	return nil
}

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil
	}
	return json.RawMessage(b.Bytes())
}

// getenv is os.Getenv; tests replace it.
var getenv = os.Getenv

// detectCI names the CI system the entry was recorded on, when known.
func detectCI() string {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return "github-actions"
	case getenv("GITLAB_CI") == "true":
		return "gitlab-ci"
	case getenv("CI") != "":
		return "ci"
	}
	return ""
}

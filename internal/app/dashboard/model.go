package dashboard

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/probes/querytext"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// Point is one second of the run as the page charts it; the history a
// late page gets is every Point since the start.
type Point struct {
	// Seq numbers the points from 1; T is the seconds since the
	// dashboard's first point.
	Seq  int64     `json:"seq"`
	T    float64   `json:"t"`
	Time time.Time `json:"time"`
	// Part is the part of the command the point belongs to (a
	// sign-off's side, a capacity stage; "" for a run), and PartT the
	// seconds since the part's first point.
	Part  string       `json:"part,omitempty"`
	PartT float64      `json:"part_t,omitempty"`
	Load  *LoadFigures `json:"load,omitempty"`
	DB    *DBFigures   `json:"db,omitempty"`
}

// LoadFigures are the engine's figures at one second.
type LoadFigures struct {
	// Users, Requests, Failures, Dropped and ErrorsByKind are read from
	// the engine's live snapshot at the tick (what /metrics shows at that
	// instant): active users summed over the scenarios, and cumulative
	// counts of MCP and http requests. Failures leaves out the aborted and
	// canceled requests, as the progress line and load.jsonl do (they are
	// the scenario's own doing); ErrorsByKind has every kind.
	Users        int64            `json:"users"`
	Requests     int64            `json:"requests"`
	Failures     int64            `json:"failures"`
	Dropped      int64            `json:"dropped"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind,omitempty"`
	// Second is the engine's last line of load.jsonl (its last whole
	// second: rate and latency quantiles of that second), nil before the
	// first.
	Second *SecondFigures `json:"second,omitempty"`
}

// SecondFigures are one line of load.jsonl, the fields the page charts.
type SecondFigures struct {
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	ReqPerSecond   float64 `json:"req_per_second"`
	Failures       int64   `json:"failures"`
	Dropped        int64   `json:"dropped"`
	P50Ms          float64 `json:"p50_ms"`
	P95Ms          float64 `json:"p95_ms"`
	P99Ms          float64 `json:"p99_ms"`
	EngineCores    float64 `json:"engine_cores"`
	MachineBusy    float64 `json:"machine_busy"`
	LateP99Ms      float64 `json:"late_p99_ms"`
}

// DBFigures are the probes' latest sample as of one second.
type DBFigures struct {
	SampleTime time.Time          `json:"sample_time"`
	States     rundir.StateCounts `json:"states"`
	// IdleInTx counts both idle-in-transaction states; Stuck those held
	// past the stuck threshold; OldestHoldSeconds the oldest one's age.
	IdleInTx          int     `json:"idle_in_tx"`
	Stuck             int     `json:"stuck"`
	OldestHoldSeconds float64 `json:"oldest_hold_seconds"`
	Apps              []App   `json:"apps,omitempty"`
	// PgBouncer is nil without PgBouncer's console; Pool without the
	// service's metrics.
	PgBouncer *Bouncer `json:"pgbouncer,omitempty"`
	Pool      *Pool    `json:"pool,omitempty"`
	Gap       bool     `json:"gap,omitempty"`
}

// App is one application's backends by state.
type App struct {
	Name string `json:"name"`
	rundir.StateCounts
}

// Bouncer is PgBouncer's pools at one sample.
type Bouncer struct {
	Waiting        int     `json:"waiting"`
	Active         int     `json:"sv_active"`
	MaxWaitSeconds float64 `json:"max_wait_seconds"`
	Exhausted      bool    `json:"exhausted"`
}

// Pool is the service's own pool as its metrics said last.
type Pool struct {
	Acquired float64 `json:"acquired"`
	Idle     float64 `json:"idle"`
	Total    float64 `json:"total"`
	Max      float64 `json:"max"`
	Waiting  float64 `json:"waiting"`
	// Unclosed is the sessions the service opened and never closed,
	// where its metrics say.
	Unclosed float64 `json:"unclosed_sessions,omitempty"`
}

// State is what the page shows beside the charts, as of the last tick:
// it is sent with every point and not kept in the history.
type State struct {
	Title     string     `json:"title"`
	Series    []Series   `json:"series,omitempty"`
	Scenarios []Scenario `json:"scenarios,omitempty"`
	// Episodes and StuckEpisodes count the probes' episodes so far;
	// Oldest is the oldest open one.
	Episodes      int      `json:"episodes"`
	StuckEpisodes int      `json:"stuck_episodes"`
	Oldest        *Episode `json:"oldest,omitempty"`
	// Culprits are the queries that left sessions idle in a transaction
	// so far, the most episodes first (the probes' top ten).
	Culprits []Culprit `json:"culprits,omitempty"`
	// LeftBy are the requests that left the stuck sessions: while the
	// run plays, the live join of the probe's stuck episodes to the
	// engine's request index (livejoin.go); at Finish, the forensics of
	// the finished runs (leftby.go), which replace it.
	LeftBy   []LeftBy  `json:"left_by,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"`
	// Control is the users the page may change (nil: none to change).
	Control *Control `json:"control,omitempty"`
	// View is the command's own panel (nil for a run).
	View *Panel `json:"view,omitempty"`
	// Report links the finished report once the run is over.
	Report string `json:"report,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// Series is one method's (and tool's) requests so far.
type Series struct {
	Scenario string           `json:"scenario"`
	Method   string           `json:"method"`
	Name     string           `json:"name,omitempty"`
	Requests int64            `json:"requests"`
	Failures map[string]int64 `json:"failures,omitempty"`
	P50Ms    float64          `json:"p50_ms"`
	P95Ms    float64          `json:"p95_ms"`
	P99Ms    float64          `json:"p99_ms"`
}

// Scenario is one scenario's users and iterations so far.
type Scenario struct {
	Name       string `json:"name"`
	VUs        int64  `json:"vus"`
	VUsMax     int64  `json:"vus_max"`
	Iterations int64  `json:"iterations"`
	Dropped    int64  `json:"dropped"`
}

// Episode is the oldest open idle-in-transaction episode; its query is
// a fingerprint (no literals).
type Episode struct {
	PID         int32   `json:"pid"`
	AgeSeconds  float64 `json:"age_seconds"`
	Fingerprint string  `json:"fingerprint"`
	Application string  `json:"application"`
}

// Culprit is one query (a fingerprint: no literals) and application
// whose sessions were left idle in a transaction, with their holds.
type Culprit struct {
	Fingerprint      string  `json:"fingerprint"`
	Application      string  `json:"application"`
	Episodes         int     `json:"episodes"`
	TotalHoldSeconds float64 `json:"total_hold_seconds"`
	MaxHoldSeconds   float64 `json:"max_hold_seconds"`
}

// Warning is a probe source failing now.
type Warning struct {
	Source  string `json:"source"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// loadFigures reads the engine's snapshot and its last second.
func loadFigures(s live.Snapshot, last *rundir.LoadPoint, st *State) *LoadFigures {
	f := &LoadFigures{}
	for _, sc := range s.Scenarios {
		f.Users += sc.VUs
		f.Dropped += sc.Dropped
		st.Scenarios = append(st.Scenarios, Scenario{Name: sc.Name, VUs: sc.VUs, VUsMax: sc.VUsMax, Iterations: sc.Iterations, Dropped: sc.Dropped})
	}
	for _, g := range s.Series {
		if g.Kind == live.KindIteration {
			continue
		}
		f.Requests += g.Requests
		ser := Series{Scenario: g.Scenario, Method: g.Method, Name: g.Name, Requests: g.Requests}
		for kind, n := range g.Failures {
			if n == 0 {
				continue
			}
			if kind != mcp.KindAborted && kind != mcp.KindCanceled {
				f.Failures += n
			}
			if f.ErrorsByKind == nil {
				f.ErrorsByKind = map[string]int64{}
			}
			f.ErrorsByKind[kind] += n
			if ser.Failures == nil {
				ser.Failures = map[string]int64{}
			}
			ser.Failures[kind] = n
		}
		if h := g.Hist; h != nil && h.TotalCount() > 0 {
			ser.P50Ms, ser.P95Ms, ser.P99Ms = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(95)), ms(h.ValueAtQuantile(99))
		}
		st.Series = append(st.Series, ser)
	}
	slices.SortFunc(st.Series, func(a, b Series) int {
		return strings.Compare(a.Scenario+"\x00"+a.Method+"\x00"+a.Name, b.Scenario+"\x00"+b.Method+"\x00"+b.Name)
	})
	if last != nil {
		f.Second = &SecondFigures{ElapsedSeconds: last.ElapsedSeconds, ReqPerSecond: last.ReqPerSecond,
			Failures: last.Failures, Dropped: last.DroppedIterations, P50Ms: last.P50Ms, P95Ms: last.P95Ms, P99Ms: last.P99Ms,
			EngineCores: last.EngineCores, MachineBusy: last.MachineBusy, LateP99Ms: last.LateP99Ms}
	}
	return f
}

// ms turns the engine's microseconds into milliseconds, to 0.001 ms.
func ms(us int64) float64 { return math.Round(float64(us)) / 1000 }

// dbFigures reads the probes' status. Nothing that may hold a secret
// passes unmasked: messages go through redact.String, queries are
// fingerprints (literals removed).
func dbFigures(ps probes.Status, st *State) *DBFigures {
	s := ps.Sample
	st.Episodes, st.StuckEpisodes = ps.Episodes, ps.StuckEpisodes
	if o := s.OldestIdleInTx; o != nil {
		st.Oldest = &Episode{PID: o.PID, AgeSeconds: o.AgeSeconds, Fingerprint: querytext.Fingerprint(o.Fingerprint), Application: o.ApplicationName}
	}
	for _, c := range ps.Culprits {
		st.Culprits = append(st.Culprits, Culprit{Fingerprint: querytext.Fingerprint(c.Fingerprint), Application: c.ApplicationName,
			Episodes: c.Episodes, TotalHoldSeconds: c.TotalHoldSeconds, MaxHoldSeconds: c.MaxHoldSeconds})
	}
	for _, w := range ps.Warnings {
		st.Warnings = append(st.Warnings, Warning{Source: w.Source, Message: redact.String(w.Message), Count: w.Count})
	}
	if s.Time.IsZero() {
		return nil // no sample yet
	}
	f := &DBFigures{SampleTime: s.Time, States: s.States, IdleInTx: s.States.IdleInTx + s.States.IdleInTxAborted,
		Stuck: s.StuckIdleInTx, OldestHoldSeconds: s.OldestIdleInTxSeconds, Gap: s.Gap}
	for _, a := range s.Apps {
		f.Apps = append(f.Apps, App{Name: a.Name, StateCounts: a.StateCounts})
	}
	if b := s.PgBouncer; b != nil {
		f.PgBouncer = &Bouncer{Waiting: b.ClWaiting, Active: b.SvActive, MaxWaitSeconds: b.MaxWaitSeconds, Exhausted: b.Exhausted}
	}
	if p := ps.AppPool; p != nil {
		f.Pool = &Pool{Acquired: p.Acquired, Idle: p.Idle, Total: p.Total, Max: p.Max, Waiting: p.Waiting, Unclosed: p.UnclosedSessions}
	}
	return f
}

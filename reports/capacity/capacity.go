package capacity

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/usl"
)

// Kind is the kind of a capacity search's summary.json.
const Kind = "capacity"

// Summary is the summary.json of a capacity search's output
// directory (leakbench capacity): one search per variant or target, and
// their comparison when there are two. See SCHEMA.md, "capacity".
type Summary struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"`
	Started       time.Time `json:"started"`
	Ended         time.Time `json:"ended"`
	Capacity      Capacity  `json:"capacity"`
}

// Capacity is summary.json's capacity section.
type Capacity struct {
	// Searches has one search per variant (or the target), in the order
	// they ran.
	Searches []Search `json:"searches"`
	// Change compares the first search with the second (before, after);
	// nil with one search, or when either found no capacity.
	Change *Change `json:"change,omitempty"`
	// SizingChange compares the two searches' sizings, also when either
	// found no capacity; nil with one search (CompareSizing).
	SizingChange *SizingChange `json:"sizing_change,omitempty"`
}

// Change is how the capacity moved from one search to the next.
type Change struct {
	Before string  `json:"before"`
	After  string  `json:"after"`
	From   int     `json:"from"`
	To     int     `json:"to"`
	Ratio  float64 `json:"ratio"`
	Unit   string  `json:"unit"`
	// Line says it in words: "the fix raised capacity from 38 to 410
	// users, 10.8×".
	Line string `json:"line"`
	// Hold says what the measured hold did, from the two searches'
	// sizings (HoldChange); absent when either lacks a measured hold.
	Hold string `json:"hold,omitempty"`
}

// Outcomes of a capacity search.
const (
	// Found: a stage held every limit and a later one broke one;
	// Capacity is the largest load that held.
	Found = "found"
	// AboveMax: every stage held, up to the search's max.
	AboveMax = "above_max"
	// BelowStart: even the smallest load tried broke a limit.
	BelowStart = "below_start"
	// Inconclusive: the search stopped before a limit tripped
	// for a reason that is not the service's (the generator saturated, a
	// stage did not settle, a stage could not be run): Capacity is only
	// the largest load measured to hold, a lower bound.
	Inconclusive = "inconclusive"
)

// Search is one capacity search: its stages and what they found.
type Search struct {
	// Name is the variant or the target's name; Variant the reference
	// gateway's variant (empty for a target).
	Name    string `json:"name"`
	Variant string `json:"variant,omitempty"`
	Target  string `json:"target,omitempty"`
	// Load is what the stages stepped: "users" or "rate"; Unit how it is
	// counted ("users", "iterations/s").
	Load string `json:"load"`
	Unit string `json:"unit"`
	// Outcome is Found, AboveMax, BelowStart or
	// Inconclusive.
	Outcome string `json:"outcome"`
	// Capacity is the largest load a stage held every limit at (0: none
	// did); FirstBad the smallest load that broke one (0: none did).
	Capacity int `json:"capacity"`
	FirstBad int `json:"first_bad,omitempty"`
	// Resolution is the resolution asked ("10%", "5"); Resolved whether
	// the search narrowed Capacity..FirstBad to it within its stages.
	Resolution string `json:"resolution"`
	Resolved   bool   `json:"resolved"`
	// Limit is the limit that tripped first at FirstBad ("pool
	// exhausted", "mcp_req_duration{name:x} p(95)<500"), Resource the
	// resource behind it, Detail what was measured.
	Limit    string `json:"limit,omitempty"`
	Resource string `json:"resource,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// LimitAtSeconds is when in that stage Limit tripped, in seconds from
	// the stage's load start (Trip.AtSeconds); absent when the
	// stage did not record it.
	LimitAtSeconds *float64 `json:"limit_at_s,omitempty"`
	// LimitTiedWith names the other limits that tripped in that stage at
	// the same recorded time as Limit: their order is then unknown (a
	// threshold is timed to its second), and the headline says so instead
	// of calling Limit first.
	LimitTiedWith []string `json:"limit_tied_with,omitempty"`
	// Reason says why an inconclusive search stopped.
	Reason string `json:"reason,omitempty"`
	// Limits lists every limit the stages were judged by.
	Limits []string `json:"limits"`
	// Min is the load required (--min; 0: none); MinPass whether
	// Capacity reached it (absent without Min, or when an inconclusive
	// search had not reached it).
	Min     int   `json:"min,omitempty"`
	MinPass *bool `json:"min_pass,omitempty"`
	// Stages in the order they ran.
	Stages []Stage `json:"stages"`
	// Dir is the directory holding the stages' run directories, relative
	// to the output directory ("" : the output directory itself).
	Dir string `json:"dir,omitempty"`
	// USL is the Universal Scalability Law fitted to the stages'
	// throughput (FitUSL): a model, with why it predicts nothing when it
	// does not. Absent for a search stepping arrival rate (the model is of
	// concurrency).
	USL *usl.Fit `json:"usl,omitempty"`
	// Sizing is the sizing of the stage at the knee (the largest load
	// that held; else the first stage sized): the pool its measured hold
	// asks for. Absent when no stage was probed.
	Sizing *rundir.Sizing `json:"sizing,omitempty"`
	// SizingStage is that stage's index.
	SizingStage int `json:"sizing_stage,omitempty"`
}

// Stage is one stage: one run at one load, its run directory kept.
type Stage struct {
	Index int `json:"index"`
	Load  int `json:"load"`
	// Dir is its run directory, relative to the output directory.
	Dir string `json:"dir"`
	// Held: the stage held every limit. Trips are the limits it broke,
	// in the order they first tripped in the stage (AtSeconds; those
	// whose time was not recorded last, in the order they were judged).
	// Inconclusive says why the stage judges
	// nothing of the service (it did not settle, the generator
	// saturated); Held is then false and Trips empty.
	Held         bool    `json:"held"`
	Trips        []Trip  `json:"trips,omitempty"`
	Inconclusive string  `json:"inconclusive,omitempty"`
	Seconds      float64 `json:"seconds"`
	// What the stage measured.
	Requests      int64   `json:"requests"`
	ReqPerSecond  float64 `json:"req_per_second"`
	ErrorRate     float64 `json:"error_rate"`
	P50Ms         float64 `json:"p50_ms"`
	P95Ms         float64 `json:"p95_ms"`
	P99Ms         float64 `json:"p99_ms"`
	Probed        bool    `json:"probed"`
	ServiceConns  int     `json:"service_conns"`
	MaxStuck      int     `json:"max_stuck_idle_in_tx"`
	PgBouncerWait int     `json:"pgbouncer_max_cl_waiting"`
	AppPoolMax    float64 `json:"app_pool_max,omitempty"`
	AppPoolPeak   float64 `json:"app_pool_max_acquired,omitempty"`
	PoolExhausted bool    `json:"pool_exhausted"`
	PoolPinned    bool    `json:"pool_pinned"`
	// Generator is the load generator's verdict for the stage (kept_up,
	// saturated; absent where the engine did not record one) and Line its
	// report line.
	Generator     string `json:"generator,omitempty"`
	GeneratorLine string `json:"generator_line,omitempty"`
	// HoldSeconds and CeilingReqPerS are the stage's sizing.hold_seconds
	// and sizing.ceiling_req_per_s: connection-seconds per request as
	// measured, and the pool's ceiling P/h; absent when not measured.
	HoldSeconds    float64 `json:"hold_s,omitempty"`
	CeilingReqPerS float64 `json:"ceiling_req_per_s,omitempty"`
	// Sizing is the stage's whole sizing, kept for the search's (not
	// written with the stage: its run directory's summary.json has it).
	Sizing *rundir.Sizing `json:"-"`
}

// Trip is one limit a stage broke.
type Trip struct {
	Limit    string `json:"limit"`
	Detail   string `json:"detail"`
	Resource string `json:"resource,omitempty"`
	// AtSeconds is when in the stage the limit first tripped, in seconds
	// from the stage's load start (negative: before it, as a pool still
	// held by the stage before); nil when what the stage recorded cannot
	// say. AtBasis says what the time was read from, or why there is
	// none ("time not recorded: …"). See SCHEMA.md for each limit's
	// definition.
	AtSeconds *float64 `json:"at_s,omitempty"`
	AtBasis   string   `json:"at_basis,omitempty"`
}

// When is the trip's time in words: "at 3.0 s into the stage", or "time
// not recorded".
func (t Trip) When() string {
	switch {
	case t.AtSeconds == nil:
		return "time not recorded"
	case *t.AtSeconds < 0:
		return fmt.Sprintf("%.1f s before the stage's load started", -*t.AtSeconds)
	}
	return fmt.Sprintf("at %.1f s into the stage", *t.AtSeconds)
}

// TiedWithFirst names the trips after the first (trips sorted by
// SortTrips) that tripped at the same recorded time as it.
func TiedWithFirst(trips []Trip) []string {
	var tied []string
	if len(trips) == 0 || trips[0].AtSeconds == nil {
		return nil
	}
	for _, t := range trips[1:] {
		if t.AtSeconds == nil || *t.AtSeconds != *trips[0].AtSeconds {
			break
		}
		tied = append(tied, t.Limit)
	}
	return tied
}

// SortTrips orders trips by when they first tripped, earliest first; those
// whose time was not recorded go last, in the order they came (stable).
func SortTrips(trips []Trip) {
	slices.SortStableFunc(trips, func(a, b Trip) int {
		switch {
		case a.AtSeconds == nil && b.AtSeconds == nil:
			return 0
		case a.AtSeconds == nil:
			return 1
		case b.AtSeconds == nil:
			return -1
		}
		return cmp.Compare(*a.AtSeconds, *b.AtSeconds)
	})
}

// FitUSL fits the Universal Scalability Law to the search's curve: each
// stage's load (users) against its completed requests a second. Stages
// that judged nothing of the service (inconclusive: the generator
// saturated, the stage did not settle) are left out, since their
// throughput is not the service's. A search stepping arrival rate gets
// nil: its load is not a concurrency.
func (s *Search) FitUSL() *usl.Fit {
	if s.Load != "users" {
		return nil
	}
	var pts []usl.Point
	for _, st := range s.Stages {
		if st.Inconclusive != "" || st.Requests == 0 && st.ReqPerSecond == 0 {
			continue
		}
		pts = append(pts, usl.Point{N: float64(st.Load), X: st.ReqPerSecond})
	}
	return usl.FitPoints(pts)
}

// SizeAtKnee sets the search's Sizing from its stages: the stage at
// Capacity that held, else the first stage that was sized.
func (s *Search) SizeAtKnee() {
	var pick *Stage
	for i := range s.Stages {
		st := &s.Stages[i]
		if st.Sizing == nil {
			continue
		}
		if pick == nil || st.Held && st.Load == s.Capacity {
			pick = st
		}
	}
	if pick != nil {
		s.Sizing, s.SizingStage = pick.Sizing, pick.Index
	}
}

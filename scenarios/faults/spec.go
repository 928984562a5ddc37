package faults

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Link names: the stack's connections a toxic can sit on.
const (
	LinkDB       = "db"       // gateway → PgBouncer
	LinkPG       = "pg"       // PgBouncer → PostgreSQL
	LinkUpstream = "upstream" // gateway → upstream
)

// LinkNames lists the links, in wiring order.
var LinkNames = []string{LinkDB, LinkPG, LinkUpstream}

// Toxics are Toxiproxy's toxic types a Spec may name.
var Toxics = []string{"latency", "bandwidth", "slow_close", "timeout", "reset_peer", "slicer", "limit_data"}

// Actions are the process faults.
const (
	// ActionPgBouncerPause sends PAUSE to PgBouncer's admin console at At
	// and RESUME when For is over: clients wait (cl_waiting climbs).
	ActionPgBouncerPause = "pgbouncer_pause"
	// ActionPgBouncerReload sends RELOAD (instant).
	ActionPgBouncerReload = "pgbouncer_reload"
	// ActionPgBouncerKill sends KILL for the application database at At —
	// every client and server connection of it dropped at once, what a
	// PgBouncer restart does to them — and RESUME when For is over (0: at
	// once); new clients wait in between.
	ActionPgBouncerKill = "pgbouncer_kill"
	// ActionTerminateBackends runs pg_terminate_backend on Count (or
	// Fraction) of the backends of ApplicationName (instant).
	ActionTerminateBackends = "terminate_backends"
	// ActionPostgresRestart stops PostgreSQL with a fast shutdown at At
	// (every open transaction rolled back, every connection closed) and
	// starts it again when For is over (0: at once): a restart or a
	// failover, as the service sees it. Local provider.
	ActionPostgresRestart = "postgres_restart"
	// ActionPgBouncerRestart stops the PgBouncer process at once at At and
	// starts it again when For is over (0: at once). Local provider.
	ActionPgBouncerRestart = "pgbouncer_restart"
)

// Actions lists the process faults.
var Actions = []string{ActionPgBouncerPause, ActionPgBouncerKill, ActionPgBouncerReload, ActionTerminateBackends,
	ActionPostgresRestart, ActionPgBouncerRestart}

// Spec is one fault of a timeline, as a profile spells it. Exactly one of
// Toxic (with Link) and Action is set. Durations are from the start of the
// load.
type Spec struct {
	At  time.Duration `yaml:"at" json:"at"`
	For time.Duration `yaml:"for" json:"for,omitempty"`

	Link     string  `yaml:"link" json:"link,omitempty"`
	Toxic    string  `yaml:"toxic" json:"toxic,omitempty"`
	Stream   string  `yaml:"stream" json:"stream,omitempty"` // upstream or downstream (default)
	Toxicity float64 `yaml:"toxicity" json:"toxicity,omitempty"`
	// Toxics' attributes; each toxic reads its own.
	Latency       time.Duration `yaml:"latency" json:"latency,omitempty"`               // latency
	Jitter        time.Duration `yaml:"jitter" json:"jitter,omitempty"`                 // latency
	RateKBps      int64         `yaml:"rate_kbps" json:"rate_kbps,omitempty"`           // bandwidth
	Timeout       time.Duration `yaml:"timeout" json:"timeout,omitempty"`               // timeout (0: never close), reset_peer
	Delay         time.Duration `yaml:"delay" json:"delay,omitempty"`                   // slow_close, slicer (between slices)
	Bytes         int64         `yaml:"bytes" json:"bytes,omitempty"`                   // limit_data
	AverageSize   int           `yaml:"average_size" json:"average_size,omitempty"`     // slicer
	SizeVariation int           `yaml:"size_variation" json:"size_variation,omitempty"` // slicer

	Action          string  `yaml:"action" json:"action,omitempty"`
	Count           int     `yaml:"count" json:"count,omitempty"`                       // terminate_backends
	Fraction        float64 `yaml:"fraction" json:"fraction,omitempty"`                 // terminate_backends
	ApplicationName string  `yaml:"application_name" json:"application_name,omitempty"` // terminate_backends; default mcp-gateway

	// Line is where the fault is written, for errors (0 if unknown).
	Line int `yaml:"-" json:"-"`
}

// SetLine records the Spec's line (scenariofile.Section calls it per entry).
func (s *Spec) SetLine(line int) { s.Line = line }

// Name is a short label: "db reset_peer", "terminate_backends".
func (s Spec) Name() string {
	if s.Action != "" {
		return s.Action
	}
	n := s.Link + " " + s.Toxic
	if s.Stream == "upstream" {
		n += " (upstream)"
	}
	return n
}

// End is when the fault is over: At+For (At for an instant action).
func (s Spec) End() time.Duration { return s.At + s.For }

// Links lists the links the timeline puts toxics on, sorted.
func Links(specs []Spec) []string {
	var out []string
	for _, s := range specs {
		if s.Link != "" && !slices.Contains(out, s.Link) {
			out = append(out, s.Link)
		}
	}
	slices.Sort(out)
	return out
}

// Problem is one thing wrong with a timeline, at its entry's line.
type Problem struct {
	Index int // the entry's position in the timeline
	Line  int
	Msg   string
}

// Validate checks a timeline against a run of length runLength (0: not
// checked) and says what is wrong with each entry: an unknown link, toxic
// or action, missing or contradicting fields, a fault that starts after the
// run ends, and two faults that cannot be combined — the same toxic type on
// the same link and stream, or two PgBouncer pauses, overlapping in time.
func Validate(specs []Spec, runLength time.Duration) []Problem {
	var ps []Problem
	add := func(i int, format string, args ...any) {
		ps = append(ps, Problem{Index: i, Line: specs[i].Line, Msg: fmt.Sprintf(format, args...)})
	}
	for i, s := range specs {
		switch {
		case s.At < 0 || s.For < 0:
			add(i, "at and for must not be negative")
		case runLength > 0 && s.At >= runLength:
			add(i, "starts at %s, after the run's %s of load", s.At, runLength)
		}
		switch {
		case s.Action != "" && (s.Link != "" || s.Toxic != ""):
			add(i, "an action (%s) takes no link or toxic", s.Action)
		case s.Action != "":
			if !slices.Contains(Actions, s.Action) {
				add(i, "unknown action %q (want %s)", s.Action, strings.Join(Actions, ", "))
			}
			if s.Action == ActionPgBouncerPause && s.For <= 0 {
				add(i, "pgbouncer_pause needs for: how long PgBouncer stays paused")
			}
			if s.Action == ActionTerminateBackends {
				switch {
				case s.Count < 0 || s.Fraction < 0 || s.Fraction > 1:
					add(i, "count must be ≥ 0 and fraction from 0 to 1")
				case s.Count > 0 && s.Fraction > 0:
					add(i, "give count or fraction, not both")
				}
			}
		case s.Link == "" || s.Toxic == "":
			add(i, "want link and toxic (a network fault) or action (a process fault)")
		default:
			if !slices.Contains(LinkNames, s.Link) {
				add(i, "unknown link %q (the stack's links: %s)", s.Link, strings.Join(LinkNames, ", "))
			}
			if !slices.Contains(Toxics, s.Toxic) {
				add(i, "unknown toxic %q (want %s)", s.Toxic, strings.Join(Toxics, ", "))
			}
			if s.For <= 0 {
				add(i, "a toxic needs for: how long it stays on the link")
			}
			if s.Stream != "" && s.Stream != "upstream" && s.Stream != "downstream" {
				add(i, "stream %q: want upstream or downstream", s.Stream)
			}
			if s.Toxicity < 0 || s.Toxicity > 1 {
				add(i, "toxicity %g: want 0 to 1 (0 means 1)", s.Toxicity)
			}
		}
	}
	for i := range specs {
		for j := i + 1; j < len(specs); j++ {
			a, b := specs[i], specs[j]
			if !(a.At < b.End() && b.At < a.End()) {
				continue
			}
			sameToxic := a.Toxic != "" && a.Link == b.Link && a.Toxic == b.Toxic && a.ToxicStream() == b.ToxicStream()
			bothPause := a.pgbouncerHold() && b.pgbouncerHold()
			// A server that is down cannot be restarted, paused or
			// told to reload or terminate.
			serverDown := (a.Server() != "" || b.Server() != "") && a.Action != "" && b.Action != ""
			if sameToxic || bothPause || serverDown {
				add(j, "overlaps the %s of line %d (%s–%s): the two cannot be combined", a.Name(), a.Line, a.At, a.End())
			}
		}
	}
	return ps
}

// Server is the stack server a restart fault stops and starts again
// ("postgres" or "pgbouncer"; "" for any other fault).
func (s Spec) Server() string {
	switch s.Action {
	case ActionPostgresRestart:
		return "postgres"
	case ActionPgBouncerRestart:
		return "pgbouncer"
	}
	return ""
}

// pgbouncerHold: the fault holds PgBouncer's clients until a RESUME.
func (s Spec) pgbouncerHold() bool {
	return s.Action == ActionPgBouncerPause || s.Action == ActionPgBouncerKill
}

// ToxicStream is the direction a link's toxic acts on, in Toxiproxy's words
// ("downstream" unless the spec says otherwise).
func (s Spec) ToxicStream() string {
	if s.Stream == "" {
		return "downstream"
	}
	return s.Stream
}

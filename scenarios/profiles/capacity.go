package profiles

import "time"

// CapacitySection is a profile's capacity: section as written: how
// leakbench capacity steps the load up and which limits end the search.
// The runner only reads it (a plain run plays the profile's own load and
// ignores it); package capacity checks and interprets it. Every limit is
// optional; a zero or empty field is one the file did not set.
type CapacitySection struct {
	// Load is what the stages step: users (a constant-vus scenario's
	// vus) or rate (a constant-arrival-rate scenario's rate).
	Load string `yaml:"load"`
	// Start is the first stage's load, Max the most the search tries;
	// each stage before the first failure multiplies the load by Factor.
	Start  int     `yaml:"start"`
	Max    int     `yaml:"max"`
	Factor float64 `yaml:"factor"`
	// Resolution is how close the bisection gets: "10%" of the last good
	// load, or a whole number of users (requests per time unit).
	Resolution string `yaml:"resolution"`
	// Stage is how long each stage holds its load; MaxStages bounds the
	// search.
	Stage     time.Duration `yaml:"stage"`
	MaxStages int           `yaml:"max_stages"`
	// Min is the load the service must sustain (exit 99 below it).
	Min int `yaml:"min"`

	// StuckSessions is the most sessions stuck idle in a transaction at
	// one instant a stage may show ("" : no such limit).
	StuckSessions string `yaml:"stuck_sessions"`
	// Pool is the pool limit: exhausted (the service pool at its max or
	// PgBouncer clients queued, as the report judges it), pinned (the
	// service's connections pinned, as the database saw them), any (either;
	// the default when the stage is probed) or off.
	Pool string `yaml:"pool"`
	// ErrorRate is the most failed requests' share a stage may have
	// (mcp_req_failed rate), e.g. 0.01; "" : no such limit.
	ErrorRate string `yaml:"error_rate"`
	// Thresholds are more limits in k6's threshold syntax, by metric:
	// mcp_req_duration{name:generate_report}: ["p(95)<500"].
	Thresholds map[string][]string `yaml:"thresholds"`
	// Generator: a stage where the load generator saturated stops the
	// search (on, the default) or is only reported (off).
	Generator string `yaml:"generator"`
}

package rundir

// Sizing is summary.json's sizing: what pool the measured hold asks for,
// and whether PostgreSQL and PgBouncer have the connections for it. Every
// figure it rests on is an Input with its source; what was not measured
// is named in Missing and the figures that needed it are left out. See
// reports/SCHEMA.md, "sizing", and package reports/sizing.
type Sizing struct {
	// Options are what was asked (flags), so that rendering the run again
	// sizes it the same way.
	Options SizingOptions `json:"options"`
	// Inputs are the figures used, each with its source.
	Inputs []SizingInput `json:"inputs"`
	// Missing names the inputs that were not measured or given, and what
	// they would have given.
	Missing []string `json:"missing,omitempty"`
	// Notes say what a reader must know of how the measured figures were
	// taken: the windows of the run the hold left out, and why.
	Notes []string `json:"notes,omitempty"`
	// HoldSeconds is h: connection-seconds per request (the Input "hold
	// h" says from what).
	HoldSeconds float64 `json:"hold_seconds,omitempty"`
	// CeilingReqPerS is P/h: the most requests a second the pool can
	// serve with this hold.
	CeilingReqPerS float64 `json:"ceiling_req_per_s,omitempty"`
	// TargetReqPerS is R, OfferedConnections R·h: the connections busy on
	// average at that rate.
	TargetReqPerS      float64 `json:"target_req_per_s,omitempty"`
	OfferedConnections float64 `json:"offered_connections,omitempty"`
	// Model says how the headroom over R·h is chosen.
	Model string `json:"model"`
	// PoolNeeded is the smallest pool the model accepts at R; its
	// probability that a request waits for a connection is
	// WaitProbability and the mean wait MeanWaitSeconds.
	PoolNeeded      int     `json:"pool_needed,omitempty"`
	WaitProbability float64 `json:"wait_probability,omitempty"`
	MeanWaitSeconds float64 `json:"mean_wait_seconds,omitempty"`
	// Checks are the limits the pool needed must fit in.
	Checks []SizingCheck `json:"checks,omitempty"`
}

// SizingOptions are the sizing's flags. A nil field was not given.
type SizingOptions struct {
	// TargetReqPerS is --target-rate: R, requests a second.
	TargetReqPerS *float64 `json:"target_req_per_s,omitempty"`
	// Replicas is --replicas: how many instances of the service, each
	// with its own pool.
	Replicas *int `json:"replicas,omitempty"`
	// MaxWaitProbability is the model's wait target: the probability that
	// a request waits for a connection.
	MaxWaitProbability float64 `json:"max_wait_probability"`
}

// SizingInput is one figure the sizing used or lacked.
type SizingInput struct {
	Name string `json:"name"`
	// Value is absent when it was not measured.
	Value *float64 `json:"value,omitempty"`
	Unit  string   `json:"unit"`
	// Source: "measured: …", "flag: …", "stack config: …", "model: …"
	// or "not measured: …".
	Source string `json:"source"`
}

// SizingCheck is one limit: what it needs, what it has, and whether that
// fits. Need, Have and Fits are absent when an input they rest on is
// missing; Detail says it in words either way.
type SizingCheck struct {
	Resource string `json:"resource"`
	Need     *int   `json:"need,omitempty"`
	Have     *int   `json:"have,omitempty"`
	Fits     *bool  `json:"fits,omitempty"`
	Detail   string `json:"detail"`
}

package dashboard

import "sync"

// SignoffView is leakbench signoff's panel: the before and the after run
// side by side as they play. The sides play one after the other; each
// is a part (Server.Part), so its points carry its name and the page
// draws each side's charts in its own column, from its own start. The
// figures beside them are the side's so far, from its points.
//
// A sign-off with --capacity then searches both variants' capacity: its
// Capacity view (the capacity command's own) draws them on the same
// page, below the sides.
//
//	v := dashboard.NewSignoffView()
//	d, err := dashboard.Start(ctx, dashboard.Config{View: v})
//	…
//	runner.Signoff(ctx, runner.SignoffOptions{ /* … */ Watch: func(side string) runner.Watch { return d.Part(side) }})
type SignoffView struct {
	mu    sync.Mutex
	s     *Server
	part  string
	sides []Side
	// capacity is the searches after the sides (nil: none asked).
	capacity *CapacityView
}

// Side is one side of a sign-off so far.
type Side struct {
	Name string `json:"name"`
	// Seconds since the side's first point; Points how many it has.
	Seconds float64 `json:"seconds"`
	Points  int     `json:"points"`
	// The load: cumulative requests and failures, the most users and
	// requests per second, the last second's p95.
	Requests         int64   `json:"requests"`
	Failures         int64   `json:"failures"`
	PeakUsers        int64   `json:"peak_users"`
	PeakReqPerSecond float64 `json:"peak_req_per_second"`
	P95Ms            float64 `json:"p95_ms"`
	// The database: the most sessions idle in a transaction and stuck
	// at once, the longest hold seen, the probes' episodes so far.
	PeakIdleInTx       int     `json:"peak_idle_in_tx"`
	PeakStuck          int     `json:"peak_stuck"`
	LongestHoldSeconds float64 `json:"longest_hold_seconds"`
	Episodes           int     `json:"episodes"`
	StuckEpisodes      int     `json:"stuck_episodes"`
	// PgBouncerWaiting is the most clients PgBouncer kept waiting.
	PgBouncerWaiting int `json:"peak_pgbouncer_waiting"`
}

// NewSignoffView is leakbench signoff's view.
func NewSignoffView() *SignoffView { return &SignoffView{} }

// Command implements View.
func (*SignoffView) Command() string { return "signoff" }

func (v *SignoffView) attach(s *Server) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.s = s
	if v.capacity != nil {
		v.capacity.attach(s)
	}
}

// Capacity is the view of the capacity searches that follow the sides
// (signoff --capacity): the capacity command's view, whose stages play
// as parts of this page and whose curve and stages the page draws below
// the sides. The same view each call.
func (v *SignoffView) Capacity() *CapacityView {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.capacity == nil {
		v.capacity = NewCapacityView()
		if v.s != nil {
			v.capacity.attach(v.s)
		}
	}
	return v.capacity
}

func (v *SignoffView) observe(p *Point, st *State) {
	if p.Part == "" {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.capacity != nil && v.capacity.owns(p.Part) {
		return // a capacity stage, not a side: the capacity view's
	}
	v.part = p.Part
	var sd *Side
	for i := range v.sides {
		if v.sides[i].Name == p.Part {
			sd = &v.sides[i]
		}
	}
	if sd == nil {
		v.sides = append(v.sides, Side{Name: p.Part})
		sd = &v.sides[len(v.sides)-1]
	}
	sd.Seconds, sd.Points = p.PartT, sd.Points+1
	if l := p.Load; l != nil {
		sd.Requests, sd.Failures = l.Requests, l.Failures
		sd.PeakUsers = max(sd.PeakUsers, l.Users)
		if s := l.Second; s != nil {
			sd.PeakReqPerSecond = max(sd.PeakReqPerSecond, s.ReqPerSecond)
			sd.P95Ms = s.P95Ms
		}
	}
	if db := p.DB; db != nil {
		sd.PeakIdleInTx = max(sd.PeakIdleInTx, db.IdleInTx)
		sd.PeakStuck = max(sd.PeakStuck, db.Stuck)
		sd.LongestHoldSeconds = max(sd.LongestHoldSeconds, db.OldestHoldSeconds)
		if b := db.PgBouncer; b != nil {
			sd.PgBouncerWaiting = max(sd.PgBouncerWaiting, b.Waiting)
		}
		sd.Episodes, sd.StuckEpisodes = st.Episodes, st.StuckEpisodes
	}
}

func (v *SignoffView) panel() *Panel {
	v.mu.Lock()
	defer v.mu.Unlock()
	p := &Panel{Command: "signoff", Part: v.part, Sides: append([]Side(nil), v.sides...)}
	if v.capacity != nil {
		// Lock order: the sign-off's view, then its capacity view's
		// (which never calls back into this one).
		cp := v.capacity.panel()
		p.Searches = cp.Searches
		if len(cp.Searches) > 0 {
			p.Part = cp.Part // the sides are over once a search began
		}
	}
	return p
}

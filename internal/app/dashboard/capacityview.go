package dashboard

import (
	"fmt"
	"sync"

	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// CapacityView is leakbench capacity's panel: the stage curve as it
// grows — each stage's load against its throughput, latency and pool —
// and, once a stage breaks a limit, the limit that tripped. Each stage's
// run is a part (Server.Part), so the live charts show the stage playing;
// the curve gains a stage as the search judges it (capacity.Watch).
//
//	v := dashboard.NewCapacityView()
//	d, err := dashboard.Start(ctx, dashboard.Config{View: v})
//	…
//	capacity.Run(ctx, capacity.Options{ /* … */ Watch: capacity.Watch{
//		Stage: func(search string, i, load int) runner.Watch { return v.Stage(search, i, load) },
//		Judged: v.Judged}})
type CapacityView struct {
	mu       sync.Mutex
	s        *Server
	part     string
	searches []Search
	// parts are the names of the stages' parts begun so far, so a
	// sign-off's view can tell its sides from them (owns).
	parts map[string]bool
}

// Search is one capacity search so far.
type Search struct {
	Name string `json:"name"`
	// Load is users or rate; Unit what a stage's load counts.
	Load string `json:"load"`
	Unit string `json:"unit"`
	// Outcome is empty while the search runs; then the search's
	// (found, above_max, below_start, inconclusive), with Headline its
	// sentence and Reason why an inconclusive one stopped.
	Outcome  string `json:"outcome,omitempty"`
	Headline string `json:"headline,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Capacity is the largest load held so far; FirstBad the smallest
	// that broke a limit (0: none yet).
	Capacity int `json:"capacity"`
	FirstBad int `json:"first_bad,omitempty"`
	// Tripped is the limit that tripped first at FirstBad, with what was
	// measured ("pool exhausted: …"), once one has.
	Tripped string        `json:"tripped,omitempty"`
	Stages  []StagePoint  `json:"stages"`
	Limits  []string      `json:"limits,omitempty"`
	Playing *PlayingStage `json:"playing,omitempty"`
}

// PlayingStage is the stage whose load plays now.
type PlayingStage struct {
	Index int `json:"index"`
	Load  int `json:"load"`
}

// StagePoint is one judged stage: a point of the curve.
type StagePoint struct {
	Index int  `json:"index"`
	Load  int  `json:"load"`
	Held  bool `json:"held"`
	// Inconclusive says why the stage judged nothing of the service.
	Inconclusive string  `json:"inconclusive,omitempty"`
	ReqPerSecond float64 `json:"req_per_second"`
	ErrorRate    float64 `json:"error_rate"`
	P50Ms        float64 `json:"p50_ms"`
	P95Ms        float64 `json:"p95_ms"`
	P99Ms        float64 `json:"p99_ms"`
	// The pool: the service's connections the database saw, the
	// service pool's peak and size, PgBouncer's most waiting clients.
	ServiceConns  int     `json:"service_conns"`
	PoolPeak      float64 `json:"pool_peak,omitempty"`
	PoolMax       float64 `json:"pool_max,omitempty"`
	PgBouncerWait int     `json:"pgbouncer_waiting"`
	PoolExhausted bool    `json:"pool_exhausted"`
	// Trips are the limits the stage broke, first first ("limit:
	// detail, when").
	Trips []string `json:"trips,omitempty"`
}

// NewCapacityView is leakbench capacity's view.
func NewCapacityView() *CapacityView { return &CapacityView{} }

// Command implements View.
func (*CapacityView) Command() string { return "capacity" }

func (v *CapacityView) attach(s *Server) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.s = s
}

func (*CapacityView) observe(*Point, *State) {}

// Stage begins stage i of search at load: its run's points are the
// part "SEARCH stage I", and the curve says it plays.
func (v *CapacityView) Stage(search string, i, load int) *PartWatch {
	v.mu.Lock()
	s := v.s
	v.part = fmt.Sprintf("%s stage %d", search, i)
	if v.parts == nil {
		v.parts = map[string]bool{}
	}
	v.parts[v.part] = true
	sr := v.searchLocked(search)
	sr.Playing = &PlayingStage{Index: i, Load: load}
	part := v.part
	v.mu.Unlock()
	// Not under v.mu: the server's tick holds its lock while it asks
	// the view for its panel.
	return s.Part(part)
}

// Judged takes the search as it stands after a stage was judged, or
// once it concluded (its Outcome set).
func (v *CapacityView) Judged(cs capreport.Search) {
	v.mu.Lock()
	defer v.mu.Unlock()
	sr := v.searchLocked(cs.Name)
	sr.Load, sr.Unit, sr.Limits = cs.Load, cs.Unit, cs.Limits
	sr.Playing = nil
	sr.Stages = sr.Stages[:0]
	for _, st := range cs.Stages {
		sp := StagePoint{Index: st.Index, Load: st.Load, Held: st.Held, Inconclusive: st.Inconclusive,
			ReqPerSecond: st.ReqPerSecond, ErrorRate: st.ErrorRate, P50Ms: st.P50Ms, P95Ms: st.P95Ms, P99Ms: st.P99Ms,
			ServiceConns: st.ServiceConns, PoolPeak: st.AppPoolPeak, PoolMax: st.AppPoolMax, PgBouncerWait: st.PgBouncerWait,
			PoolExhausted: st.PoolExhausted}
		for _, t := range st.Trips {
			sp.Trips = append(sp.Trips, t.Limit+": "+t.Detail+", "+t.When())
		}
		sr.Stages = append(sr.Stages, sp)
		// The curve's bounds so far, as the search will conclude them.
		switch {
		case st.Held && st.Load > sr.Capacity:
			sr.Capacity = st.Load
		case !st.Held && st.Inconclusive == "" && (sr.FirstBad == 0 || st.Load < sr.FirstBad):
			sr.FirstBad = st.Load
			if len(st.Trips) > 0 {
				sr.Tripped = st.Trips[0].Limit + ": " + st.Trips[0].Detail
			}
		}
	}
	if cs.Outcome != "" {
		sr.Outcome, sr.Reason, sr.Headline = cs.Outcome, cs.Reason, cs.Headline()
		sr.Capacity, sr.FirstBad = cs.Capacity, cs.FirstBad
		if cs.Limit != "" {
			sr.Tripped = cs.Limit + ": " + cs.Detail
		}
		v.part = ""
	}
}

// owns says whether part is one of this view's stages.
func (v *CapacityView) owns(part string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.parts[part]
}

// searchLocked is the search named name, added if new.
func (v *CapacityView) searchLocked(name string) *Search {
	for i := range v.searches {
		if v.searches[i].Name == name {
			return &v.searches[i]
		}
	}
	v.searches = append(v.searches, Search{Name: name, Stages: []StagePoint{}})
	return &v.searches[len(v.searches)-1]
}

func (v *CapacityView) panel() *Panel {
	v.mu.Lock()
	defer v.mu.Unlock()
	p := &Panel{Command: "capacity", Part: v.part}
	for _, s := range v.searches {
		s.Stages = append([]StagePoint(nil), s.Stages...)
		p.Searches = append(p.Searches, s)
	}
	return p
}

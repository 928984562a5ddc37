package dashboard

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	judge "github.com/leakbench/leakbench/reports/soak"
)

// SoakView is leakbench soak's panel: the soak's phase and each
// resource's slope so far over the steady window — the same resources
// and thresholds the soak judges at the end (package reports/soak), fitted
// to the dashboard's own one-second points as they come. It keeps five
// sums a resource, not the points: an hour's soak costs it nothing more
// than a minute's. The soak's verdict at the end is the soak's own,
// from its files; the service's process figures (memory, descriptors,
// goroutines) are judged there only, as the dashboard does not read them.
type SoakView struct {
	mu     sync.Mutex
	set    rundir.SoakSettings
	phase  string
	load   time.Time // the load's first second; zero before
	steady time.Time
	fits   map[string]*fit
}

// SoakPanel is a soak's phase and slopes so far.
type SoakPanel struct {
	// Phase is baseline, warm-up, steady or cool-down; SteadySeconds how
	// long the steady window has run.
	Phase         string  `json:"phase"`
	WarmupSeconds float64 `json:"warmup_seconds"`
	SteadySeconds float64 `json:"steady_seconds"`
	MinPoints     int     `json:"min_points"`
	Slopes        []Slope `json:"slopes"`
}

// Slope is one resource's fit so far.
type Slope struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Points in the steady window so far; the fit's slope per hour and
	// R², and the threshold it is held to.
	Points           int     `json:"points"`
	PerHour          float64 `json:"per_hour"`
	R2               float64 `json:"r2"`
	ThresholdPerHour float64 `json:"threshold_per_hour"`
	Last             float64 `json:"last"`
	// Growing: so far the fit is over its threshold, steady enough (the
	// soak's min R²) and has risen at least the kind's floor — what would
	// fail the soak unless the cool-down brings it back.
	Growing bool `json:"growing"`
}

// Soak phases as the panel names them.
const (
	PhaseBaseline = "baseline"
	PhaseWarmup   = "warm-up"
	PhaseSteady   = "steady"
	PhaseCoolDown = "cool-down"
)

// NewSoakView is leakbench soak's view for a soak with settings set
// (judge.Defaults fills what is zero).
func NewSoakView(set rundir.SoakSettings) *SoakView {
	return &SoakView{set: judge.Defaults(set), phase: PhaseBaseline, fits: map[string]*fit{}}
}

// Command implements View.
func (*SoakView) Command() string { return "soak" }

func (*SoakView) attach(*Server) {}

func (v *SoakView) observe(p *Point, _ *State) {
	v.mu.Lock()
	defer v.mu.Unlock()
	loading := p.Load != nil && p.Load.Second != nil
	switch {
	case loading && v.load.IsZero():
		v.load, v.steady = p.Time, p.Time.Add(v.set.Warmup)
		v.phase = PhaseWarmup
	case !loading && !v.load.IsZero():
		v.phase = PhaseCoolDown
	}
	if v.phase == PhaseWarmup && !p.Time.Before(v.steady) {
		v.phase = PhaseSteady
	}
	if v.phase != PhaseSteady || p.DB == nil || p.DB.Gap {
		return
	}
	x := p.Time.Sub(v.steady).Seconds()
	db := p.DB
	// The names are the soak's own (reports/soak), so the live table
	// and the verdict at the end read alike. Held: working or in a
	// transaction; a pool's idle connections are its high-water mark,
	// not a leak.
	for _, a := range db.Apps {
		v.add("connections held ("+a.Name+")", "connections", x, float64(a.Active+a.IdleInTx+a.IdleInTxAborted+a.Other))
	}
	v.add("idle in transaction", "idle_in_tx", x, float64(db.IdleInTx))
	v.add("stuck idle in transaction", "stuck", x, float64(db.Stuck))
	if b := db.PgBouncer; b != nil {
		v.add("PgBouncer sv_active", "sv_active", x, float64(b.Active))
		v.add("PgBouncer cl_waiting", "cl_waiting", x, float64(b.Waiting))
	}
	if pl := db.Pool; pl != nil {
		v.add("service pool acquired", "pool_acquired", x, pl.Acquired)
		v.add("service unclosed sessions", "unclosed_sessions", x, pl.Unclosed)
	}
}

func (v *SoakView) add(name, kind string, x, y float64) {
	f := v.fits[name]
	if f == nil {
		f = &fit{kind: kind}
		v.fits[name] = f
	}
	f.add(x, y)
}

func (v *SoakView) panel() *Panel {
	v.mu.Lock()
	defer v.mu.Unlock()
	sp := &SoakPanel{Phase: v.phase, WarmupSeconds: v.set.Warmup.Seconds(), MinPoints: v.set.MinPoints, Slopes: []Slope{}}
	var last float64
	for name, f := range v.fits {
		slope, r2 := f.line()
		s := Slope{Name: name, Kind: f.kind, Points: f.n, PerHour: slope * 3600, R2: r2,
			ThresholdPerHour: judge.Threshold(v.set, f.kind), Last: f.last}
		s.Growing = f.n >= v.set.MinPoints && s.PerHour > s.ThresholdPerHour && r2 >= v.set.MinR2 &&
			slope*(f.lastX-f.firstX) >= judge.Floor(f.kind)
		sp.Slopes = append(sp.Slopes, s)
		last = max(last, f.lastX)
	}
	sp.SteadySeconds = last
	sort.Slice(sp.Slopes, func(i, j int) bool { return sp.Slopes[i].Name < sp.Slopes[j].Name })
	return &Panel{Command: "soak", Soak: sp}
}

// fit is a least-squares line kept as its sums.
type fit struct {
	kind                  string
	n                     int
	sx, sy, sxx, sxy, syy float64
	firstX, lastX, last   float64
}

func (f *fit) add(x, y float64) {
	if f.n == 0 {
		f.firstX = x
	}
	f.n++
	f.sx, f.sy, f.sxx, f.sxy, f.syy = f.sx+x, f.sy+y, f.sxx+x*x, f.sxy+x*y, f.syy+y*y
	f.lastX, f.last = x, y
}

// line is the fit's slope (per second) and R²; a constant series is
// flat with R² 0, as reports/trendfit gives it.
func (f *fit) line() (slope, r2 float64) {
	n := float64(f.n)
	vx := n*f.sxx - f.sx*f.sx
	if f.n < 2 || vx <= 0 {
		return 0, 0
	}
	cov := n*f.sxy - f.sx*f.sy
	vy := n*f.syy - f.sy*f.sy
	if vy <= 0 {
		return 0, 0 // a constant series: flat, whatever rounding says
	}
	return cov / vx, math.Min(1, cov*cov/(vx*vy))
}

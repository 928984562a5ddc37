package dashboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// startView starts a dashboard with view v, a point each 20 ms.
func startView(t *testing.T, v View) *Server {
	t.Helper()
	return startViewEvery(t, v, 20*time.Millisecond)
}

// startViewEvery starts a dashboard with view v, a point each every.
func startViewEvery(t *testing.T, v View, every time.Duration) *Server {
	t.Helper()
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", View: v, Every: every})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// until reads ticks (and state events) until ok holds of one's state.
func until(t *testing.T, ch <-chan sseEvent, ok func(p *Point, st State) bool) (Point, State) {
	t.Helper()
	for range 500 {
		ev := <-ch
		switch ev.name {
		case "tick":
			m := decode[tickMsg](t, ev)
			if ok(&m.Point, m.State) {
				return m.Point, m.State
			}
		case "state":
			st := decode[State](t, ev)
			if ok(nil, st) {
				return Point{}, st
			}
		}
	}
	t.Fatal("the stream never carried what was waited for")
	return Point{}, State{}
}

// TestSignoffViewBothSides: the two sides play in turn; each point names
// its side, the panel has both sides' figures, the first side's sources
// are let go when the second begins, and a page that joins late gets
// both sides' points.
func TestSignoffViewBothSides(t *testing.T) {
	s := startView(t, NewSignoffView())
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	before, f := s.Part("before"), &fakeRun{}
	before.Probing(f.status)
	before.Started(f.snap)
	until(t, ch, func(p *Point, _ State) bool { return p != nil && p.Part == "before" && p.Load != nil && p.DB != nil })
	after, g := s.Part("after"), &fakeRun{}
	before.Started(f.snap) // too late: the before side is over
	after.Probing(g.status)
	after.Started(g.snap)
	_, st := until(t, ch, func(p *Point, _ State) bool { return p != nil && p.Part == "after" && p.Load != nil })
	if st.View == nil || st.View.Command != "signoff" || len(st.View.Sides) != 2 {
		t.Fatalf("panel %+v: want the sign-off's two sides", st.View)
	}
	for i, name := range []string{"before", "after"} {
		sd := st.View.Sides[i]
		if sd.Name != name || sd.Points == 0 || sd.Requests == 0 || sd.PeakIdleInTx == 0 {
			t.Errorf("side %d: %+v: want %s with its load and database figures", i, sd, name)
		}
	}
	h := decode[history](t, next(t, stream(t, s.URL()+"events", nil), "history"))
	parts := map[string]bool{}
	for _, p := range h.Points {
		parts[p.Part] = true
	}
	if !parts["before"] || !parts["after"] || len(parts) != 2 {
		t.Errorf("a late page's history has the parts %v, want before and after only", parts)
	}
}

// TestSignoffViewCapacity: signoff --capacity's searches play on the
// sign-off's page after its sides: each stage is a part but not a side,
// and the panel carries the sides and the searches' curve together.
func TestSignoffViewCapacity(t *testing.T) {
	v := NewSignoffView()
	s := startView(t, v)
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	for _, side := range []string{"before", "after"} {
		w, f := s.Part(side), &fakeRun{}
		w.Probing(f.status)
		w.Started(f.snap)
		until(t, ch, func(p *Point, _ State) bool { return p != nil && p.Part == side && p.Load != nil })
	}
	cv := v.Capacity()
	if v.Capacity() != cv {
		t.Fatal("Capacity gave a second view: the searches would be split")
	}
	cv.Stage("fixed", 1, 10).Started((&fakeRun{}).snap)
	until(t, ch, func(p *Point, _ State) bool { return p != nil && p.Part == "fixed stage 1" })
	cv.Judged(capreport.Search{Name: "fixed", Load: "users", Unit: "users",
		Stages: []capreport.Stage{{Index: 1, Load: 10, Held: true, ReqPerSecond: 50, P95Ms: 12}}})
	_, st := until(t, ch, func(_ *Point, st State) bool {
		return st.View != nil && len(st.View.Searches) == 1 && len(st.View.Searches[0].Stages) == 1
	})
	pan := st.View
	if pan.Command != "signoff" || len(pan.Sides) != 2 || pan.Sides[0].Name != "before" || pan.Sides[1].Name != "after" {
		t.Errorf("panel %+v: want the sign-off's two sides, and no stage among them", pan)
	}
	if sr := pan.Searches[0]; sr.Name != "fixed" || sr.Capacity != 10 || sr.Stages[0].ReqPerSecond != 50 {
		t.Errorf("search %+v: want the stage judged", sr)
	}
}

// TestCapacityViewStages: each stage's run is a part; a judged stage
// reaches the page even between two stages' loads, and the limit that
// tripped is named once a stage breaks one.
func TestCapacityViewStages(t *testing.T) {
	v := NewCapacityView()
	s := startView(t, v)
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	f := &fakeRun{}
	w := v.Stage("fixed", 1, 10)
	w.Started(f.snap)
	until(t, ch, func(p *Point, _ State) bool { return p != nil && p.Part == "fixed stage 1" })
	search := capreport.Search{Name: "fixed", Load: "users", Unit: "users",
		Stages: []capreport.Stage{{Index: 1, Load: 10, Held: true, ReqPerSecond: 50, P95Ms: 12}}}
	v.Judged(search)
	_ = s.Part("") // between stages: no source, the panel still reaches the page
	_, st := until(t, ch, func(_ *Point, st State) bool {
		return st.View != nil && len(st.View.Searches) == 1 && len(st.View.Searches[0].Stages) == 1
	})
	if sr := st.View.Searches[0]; sr.Capacity != 10 || sr.Stages[0].ReqPerSecond != 50 || sr.Tripped != "" {
		t.Errorf("after stage 1: %+v", sr)
	}
	at := 2.0
	search.Stages = append(search.Stages, capreport.Stage{Index: 2, Load: 20, ReqPerSecond: 55, P95Ms: 300,
		Trips: []capreport.Trip{{Limit: "pool exhausted", Detail: "PgBouncer cl_waiting 4", AtSeconds: &at}}})
	v.Judged(search)
	_, st = until(t, ch, func(_ *Point, st State) bool {
		return st.View != nil && len(st.View.Searches[0].Stages) == 2
	})
	sr := st.View.Searches[0]
	if sr.FirstBad != 20 || !strings.HasPrefix(sr.Tripped, "pool exhausted") || len(sr.Stages[1].Trips) != 1 {
		t.Errorf("after stage 2: %+v: want the pool's limit tripped at 20", sr)
	}
}

// TestProbeViewDatabaseOnly: the probe's page has the database and no
// load.
func TestProbeViewDatabaseOnly(t *testing.T) {
	s := startView(t, NewProbeView())
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	s.Probing((&fakeRun{}).status)
	p, st := until(t, ch, func(p *Point, _ State) bool { return p != nil && p.DB != nil })
	if p.Load != nil || st.View == nil || st.View.Command != "probe" {
		t.Errorf("point %+v, panel %+v: want the database alone, under the probe's view", p, st.View)
	}
}

// TestSoakViewSlopes: the slopes are fitted over the steady window only
// (the baseline and warm-up left out), a climbing resource is growing so
// far and a flat one is not, and the cool-down stops the fit.
func TestSoakViewSlopes(t *testing.T) {
	v := NewSoakView(rundir.SoakSettings{Warmup: 10 * time.Second, MinPoints: 5})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	point := func(sec int, load bool, idle int) {
		p := &Point{Time: t0.Add(time.Duration(sec) * time.Second), DB: &DBFigures{IdleInTx: idle,
			Apps: []App{{Name: "gw"}}, PgBouncer: &Bouncer{Waiting: 0, Active: 3}}}
		if load {
			p.Load = &LoadFigures{Second: &SecondFigures{}}
		}
		v.observe(p, &State{})
	}
	for i := range 5 {
		point(i, false, 100) // baseline: not fitted
	}
	if ph := v.panel().Soak.Phase; ph != PhaseBaseline {
		t.Fatalf("phase %s before the load", ph)
	}
	for i := 5; i < 15; i++ {
		point(i, true, 100) // warm-up: not fitted
	}
	for i := 15; i < 75; i++ {
		point(i, true, (i-15)/2) // steady: +0.5 a second, 1,800 an hour
	}
	sp := v.panel().Soak
	if sp.Phase != PhaseSteady {
		t.Fatalf("phase %s in the steady window", sp.Phase)
	}
	bySlope := map[string]Slope{}
	for _, s := range sp.Slopes {
		bySlope[s.Name] = s
	}
	idle, active := bySlope["idle in transaction"], bySlope["PgBouncer sv_active"]
	if idle.Points != 60 || idle.PerHour < 1700 || idle.PerHour > 1900 || !idle.Growing {
		t.Errorf("idle in transaction: %+v: want 60 points, ≈1,800/hour, growing", idle)
	}
	if active.PerHour != 0 || active.Growing {
		t.Errorf("sv_active: %+v: want flat", active)
	}
	point(75, false, 0)
	point(76, false, 0)
	sp = v.panel().Soak
	if sp.Phase != PhaseCoolDown {
		t.Errorf("phase %s after the load", sp.Phase)
	}
	for _, s := range sp.Slopes {
		if s.Name == "idle in transaction" && s.Points != 60 {
			t.Errorf("the cool-down was fitted: %d points", s.Points)
		}
	}
}

package dashboard

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// View is a command's own panel beside the load and database charts:
// one server per command invocation, and the command's view says what
// else the page shows. The views are this package's: NewSignoffView,
// NewCapacityView, NewSoakView, NewProbeView.
type View interface {
	// Command names the command; the page draws its panel by it.
	Command() string
	// attach hands the view its server, at Start.
	attach(s *Server)
	// observe is told each point as it is taken, with the state beside
	// it, on the dashboard's ticker (never on the run's path): it only
	// adds to what it keeps.
	observe(p *Point, st *State)
	// panel is the panel as it stands.
	panel() *Panel
}

// Panel is a command's panel, in State.View.
type Panel struct {
	// Command is signoff, capacity, soak or probe.
	Command string `json:"command"`
	// Part is the part playing now (a side, a stage), "" between parts.
	Part string `json:"part,omitempty"`
	// Sides are a sign-off's before and after, in the order they play.
	Sides []Side `json:"sides,omitempty"`
	// Searches are a capacity search's variants (or its target), each
	// with the stages judged so far.
	Searches []Search `json:"searches,omitempty"`
	// Soak is a soak's phase and slopes so far.
	Soak *SoakPanel `json:"soak,omitempty"`
}

// Part begins a part of the command now — a sign-off's side, a capacity
// stage — and returns the watch its run is followed by: its points carry
// the part's name and their seconds since the part began. The sources of
// the part before are let go at once, so its last figures do not run on
// while the next part's stack starts.
func (s *Server) Part(name string) *PartWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part, s.partStart = name, time.Time{}
	s.snap, s.status, s.lastLoad = nil, nil, nil
	return &PartWatch{s: s, name: name}
}

// PartWatch is one part's run's watch (runner.Watch): it feeds the
// server while its part is the one playing, and is ignored after.
type PartWatch struct {
	s    *Server
	name string
}

// current says whether w's part is still playing.
func (w *PartWatch) current() bool {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.part == w.name
}

// Started implements engine.Watcher.
func (w *PartWatch) Started(snap func() live.Snapshot) {
	if w.current() {
		w.s.Started(snap)
	}
}

// Second implements engine.Watcher.
func (w *PartWatch) Second(p rundir.LoadPoint) {
	if w.current() {
		w.s.Second(p)
	}
}

// Probing implements runner.Watch.
func (w *PartWatch) Probing(status func() probes.Status) {
	if w.current() {
		w.s.Probing(status)
	}
}

// refreshView sends the pages the view's panel when it changed with no
// point to carry it: a capacity stage judged while the next one's load
// has not started, a side that ended.
func (s *Server) refreshView() {
	v := s.cfg.View
	if v == nil {
		return
	}
	pan := v.panel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Done || s.closed {
		return
	}
	old, _ := json.Marshal(s.state.View)
	now, _ := json.Marshal(pan)
	if bytes.Equal(old, now) {
		return
	}
	s.state.View = pan
	s.stateRaw, _ = json.Marshal(s.state)
	s.broadcastLocked(event("state", s.stateRaw))
}

// ProbeView is the probe's panel: the database side alone, no load.
type ProbeView struct{}

// NewProbeView is leakbench probe's view.
func NewProbeView() *ProbeView { return &ProbeView{} }

// Command implements View.
func (*ProbeView) Command() string        { return "probe" }
func (*ProbeView) attach(*Server)         {}
func (*ProbeView) observe(*Point, *State) {}
func (*ProbeView) panel() *Panel          { return &Panel{Command: "probe"} }

package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
)

// ErrNoControl: the dashboard serves no control (no token, or no
// externally-controlled scenario running).
var ErrNoControl = errors.New("no control")

// Control is what the page shows of the users it can change.
type Control struct {
	// Allowed is false without a token: control needs one even on
	// loopback, since any local process could otherwise steer the run.
	Allowed   bool                 `json:"allowed"`
	Scenarios []engine.ScaleTarget `json:"scenarios"`
	// Changes lists every change made so far, in order.
	Changes []rundir.ScaleChange `json:"changes,omitempty"`
}

// ScaleRequest is the body of POST /scale.
type ScaleRequest struct {
	// Scenario names the externally-controlled scenario ("": the plan's
	// only one); VUs is the users it is to run.
	Scenario string `json:"scenario,omitempty"`
	VUs      int    `json:"vus"`
	// By is "page" or "command" (leakbench scale).
	By string `json:"by,omitempty"`
}

// Scalable implements engine.Scaler: the engine's control of its
// externally-controlled scenarios.
func (s *Server) Scalable(scale engine.ScaleFunc, scenarios []engine.ScaleTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scale = scale
	s.control = &Control{Allowed: s.token != "", Scenarios: scenarios}
}

// maxScaleBody bounds a request's body: a scale request is a few bytes.
const maxScaleBody = 4 << 10

// scaleHandler serves POST /scale: it changes the users and answers with
// the change as recorded, or refuses with the reason (the run goes on).
func (s *Server) scaleHandler(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	scale, allowed := s.scale, s.token != ""
	s.mu.Unlock()
	switch {
	case !allowed:
		http.Error(w, "control needs a token: start the run with --dashboard-token-file FILE", http.StatusForbidden)
		return
	case scale == nil:
		http.Error(w, "nothing to scale: no externally-controlled scenario is running", http.StatusConflict)
		return
	}
	var req ScaleRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxScaleBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, fmt.Sprintf("want a JSON body {\"scenario\": NAME, \"vus\": N}: %v", err), http.StatusBadRequest)
		return
	}
	if req.By != engine.ScaleByPage {
		req.By = engine.ScaleByCommand
	}
	ch, err := scale(req.Scenario, req.VUs, req.By)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	s.mu.Lock()
	if s.control != nil {
		s.control.Changes = append(s.control.Changes, ch)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ch)
}

// ErrRefused: the dashboard refused a scale request; the error says why.
var ErrRefused = errors.New("the dashboard refused")

// Scale asks the dashboard at addr (host:port) to change the users, as
// leakbench scale does, with the token read from tokenFile; it returns the
// change as the engine recorded it.
func Scale(ctx context.Context, addr, tokenFile string, req ScaleRequest) (rundir.ScaleChange, error) {
	tok, err := readToken(tokenFile)
	if err != nil {
		return rundir.ScaleChange{}, err
	}
	body, _ := json.Marshal(req) // plain values: cannot fail
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/scale", bytes.NewReader(body))
	if err != nil {
		return rundir.ScaleChange{}, fmt.Errorf("dashboard address %s: %w", addr, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return rundir.ScaleChange{}, fmt.Errorf("reach the dashboard at %s (is the run up with --dashboard?): %w", addr, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxScaleBody))
	if resp.StatusCode != http.StatusOK {
		return rundir.ScaleChange{}, fmt.Errorf("%w: %s", ErrRefused, strings.TrimSpace(string(b)))
	}
	var ch rundir.ScaleChange
	if err := json.Unmarshal(b, &ch); err != nil {
		return rundir.ScaleChange{}, fmt.Errorf("read the dashboard's answer: %w", err)
	}
	return ch, nil
}

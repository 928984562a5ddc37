package capacity

import "math"

// search decides the loads of the stages: up by the factor from the start
// until a stage breaks a limit (down by it, when the first one does),
// then bisection between the last load that held and the first that broke
// until they are within the resolution. It knows loads and verdicts only.
type search struct {
	spec Spec
	// good is the largest load that held (0: none yet), bad the
	// smallest that broke a limit (0: none yet).
	good, bad int
	stages    int
	next      int
}

func newSearch(s Spec) *search { return &search{spec: s, next: s.Start} }

// Next returns the load of the next stage, or ok false when the search
// is done: resolved (within the resolution, or the max held, or even a
// load of 1 broke) or out of stages.
func (s *search) Next() (load int, ok bool) {
	if s.done() || s.stages >= s.spec.MaxStages {
		return 0, false
	}
	return s.next, true
}

// Record takes the verdict of the stage at load.
func (s *search) Record(load int, held bool) {
	s.stages++
	if held {
		s.good = max(s.good, load)
	} else if s.bad == 0 || load < s.bad {
		s.bad = load
	}
	switch {
	case s.bad == 0: // still climbing
		s.next = min(s.spec.Max, int(math.Ceil(float64(load)*s.spec.Factor)))
		if s.next <= load {
			s.next = load + 1
		}
	case s.good == 0: // the first stages broke: go down
		s.next = int(math.Floor(float64(s.bad) / s.spec.Factor))
	default:
		s.next = s.good + (s.bad-s.good)/2
	}
}

// done: the search has its answer.
func (s *search) done() bool {
	switch {
	case s.bad == 0:
		return s.good >= s.spec.Max
	case s.good == 0:
		return s.bad <= 1 || s.next < 1
	}
	return s.bad-s.good <= s.spec.step(s.good)
}

// Resolved reports whether the search ended with its answer, rather than
// out of stages.
func (s *search) Resolved() bool { return s.done() }

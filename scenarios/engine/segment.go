package engine

import "github.com/leakbench/leakbench/scenarios/plan"

// useSegment makes e play seg's slice of its plan: cp was already cut by
// seg.Apply, which gave each scenario's first user index (bases), so that
// users keep the indices — tokens, data rows — they have in the whole
// plan; arrival-rate schedules are strided in arrivalRate.
func (e *engine) useSegment(seg plan.Segment, bases []int) {
	e.segment = seg
	for i, sr := range e.runs {
		sr.vuBase = bases[i]
	}
}

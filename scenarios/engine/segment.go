package engine

import "github.com/leakbench/leakbench/scenarios/plan"

// useSegment makes e play seg's slice of whole: cp was already cut by
// seg.Apply, which gave each scenario's first user index (bases), so that
// users keep the indices — tokens, data rows — they have in the whole
// plan; arrival-rate schedules are strided in arrivalRate. A data file's
// rows are counted from the scenario's first user in the whole plan, over
// its users there (answers.go).
func (e *engine) useSegment(seg plan.Segment, bases []int, whole *plan.Compiled) {
	e.segment = seg
	wholeBase := 0
	for i, sr := range e.runs {
		sr.vuBase = bases[i]
		users := whole.Scenarios[i].Users
		sr.dataBase, sr.dataUsers = wholeBase, users
		wholeBase += users
	}
}

package capacity

import (
	"github.com/leakbench/leakbench/internal/app/runner"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// Watch follows a search live: the dashboard's capacity view. Either
// func may be nil.
type Watch struct {
	// Stage is called as stage i of search (its name: the variant, or
	// the target's) begins at load; the stage's run is followed by the
	// watch it returns.
	Stage func(search string, i, load int) runner.Watch
	// Judged is called with the search so far each time a stage is
	// judged, and once more when the search concludes (Outcome set).
	Judged func(s capreport.Search)
}

// stage is the watch of stage i's run, nil without one.
func (w Watch) stage(search string, i, load int) runner.Watch {
	if w.Stage == nil {
		return nil
	}
	return w.Stage(search, i, load)
}

// judged hands the search so far to the watch, if any.
func (w Watch) judged(s capreport.Search) {
	if w.Judged != nil {
		w.Judged(s)
	}
}

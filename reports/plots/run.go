package plots

import "github.com/leakbench/leakbench/internal/lib/rundir"

// Run is one run as its plots draw it: its summary (the settings, the
// load's span, the faults) and its records. A long run read a record at a
// time keeps only some of them: Samples those its plots draw (Keeper),
// Episodes perhaps only the worst; SampleCount, Holds and Rates then give
// what the plots need of all of them.
type Run struct {
	// Label names the run in the plots' titles: "before (commit-in-finally)".
	Label    string
	Summary  *rundir.Summary
	Samples  []rundir.Sample
	Episodes []rundir.Episode
	Load     []rundir.LoadPoint
	// SampleCount is how many samples the run recorded; 0 when Samples
	// are all of them.
	SampleCount int
	// Holds is the release-latency histogram of all the run's episodes;
	// nil: binned from Episodes.
	Holds *Holds
	// Rates are the service pool's counter rates drawn from every sample,
	// when Samples holds only those the plots draw; nil: drawn from
	// Samples.
	Rates *Rates

	// discover, when set, collects the series panels ask for (keep.go).
	discover *seriesSet
}

// sampleCount is how many samples the run recorded.
func (r *Run) sampleCount() int { return max(r.SampleCount, len(r.Samples)) }

// Package reports turns a run directory into documents people read and
// CI systems parse, and judges a before/after sign-off.
//
// For one run, RenderRun writes into the run directory: summary.json (the
// versioned schema of SCHEMA.md), report.md (short enough for a pull
// request comment, and appended to $GITHUB_STEP_SUMMARY when that is set),
// report.html (self-contained: plots inline as SVG, nothing loaded from
// anywhere), junit.xml (one test case per leak check and per threshold)
// and plots/NAME.png|svg. For a sign-off, RenderSignoff renders both runs
// and the comparison: compare.json, the same documents, and plots with
// before and after side by side on shared axes.
//
// The table follows the ContextForge incident's: stuck connections (most at
// one instant), connection release latency, pool state, requests, error
// rate and latency — before beside after.
//
// A run killed before it wrote its summary still has the probe's
// append-only samples.jsonl and episodes.jsonl: LoadRun rebuilds what it
// can from them and marks the run incomplete, and every document says so.
// A directory that holds no run is ErrNotRun.
//
// Rendering takes memory that does not grow with the run: LoadRun reads
// samples.jsonl and episodes.jsonl as streams, folds what needs every
// record (the pool verdict, a killed run's summary, the forensics, the
// release-latency histogram) as it goes, and keeps of a long run only the
// samples its thinned plots draw and its worst episodes (Run). A day at
// 100 ms with a thousand connections and a million episodes renders in
// well under 100 MB of heap (BenchmarkReportDay).
//
// A capacity search's documents are package reports/capacity's, a soak's
// section package reports/soak's; a sign-off with --capacity gets its
// Capacity section through Comparison.AddCapacity.
//
// The plots are package plots' (reports/plots): gonum/plot figures
// rendered to an io.Writer, as vegeta's are:
//
//	run, err := reports.LoadRun("out/before")
//	if err != nil { … }
//	err = plots.Write(w, plots.Stuck, plots.PNG, run.PlotRun())
//
// and a comparison of two runs:
//
//	cmp := reports.CompareRuns(before, after)
//	err := reports.RenderComparison("out", cmp) // exit 99 unless cmp.Pass
package reports

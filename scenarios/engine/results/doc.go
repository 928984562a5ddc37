// Package results turns what a run counted into its Result, and adds up
// the shards of one plan into the Result one process would have had.
//
// Its input is [Counts]: a run's series.json state (rundir.SeriesState:
// every series' counters, each scenario's, the checks, the error samples)
// with the series' HDR histograms. The engine reads its counters into
// Counts once a run has ended (and each second while abortOnFail
// thresholds wait for their turn); [Merge] makes one from the shards'
// series.json and histograms.hlog ([ReadShard]). [Summarize] assembles
// the Result from either — latency summaries of the merged histograms,
// counters summed over scenarios, every threshold judged ([Judge]) — so a
// merged run is summed up and judged by the very code that judges one.
//
// It is apart from the engine because it reads counts and never records
// them: nothing here runs on the request path, and merging shards needs
// no engine (no plan played, no client, no counters of its own).
package results

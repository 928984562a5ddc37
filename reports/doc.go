// Package reports turns what a run recorded into documents: summary.json and
// report.md for one run, compare.json and report.md for a before/after
// sign-off, with the verdict that decides leakbench's exit code.
//
// The table follows the ContextForge incident's: stuck connections (most at
// one instant), how long the longest was held, connection release latency,
// pool state, requests, error rate and latency — before beside after.
//
//	sum, err := reports.ReadRun("out/before")
//	cmp := reports.Compare(before, after)
//	_ = cmp.WriteMarkdown(os.Stdout)
package reports

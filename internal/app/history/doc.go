// Package history keeps leakbench's results over time: every `leakbench run`
// or `leakbench signoff` given --history DIR appends one entry — the key
// figures, the verdict, the summary, the release under test, leakbench's
// version and the environment — to an append-only directory, in the
// versioned format FORMAT.md documents. A sign-off can then be compared
// with the last accepted one (a baseline), with noise-aware rules, and
// `leakbench trend` plots the figures release after release.
//
// One entry is one file, named by its ID: a UTC timestamp with nanoseconds
// and a random suffix, so that names sort by time and two writers — two
// goroutines or two processes — never pick the same one. The file is
// written under a temporary dot-name and hard-linked into place, which
// fails rather than overwrites, so a reader never sees half an entry and
// no entry is ever replaced. Readers skip, with a warning, any file that is
// corrupt or in a format version they do not read.
//
//	st, err := history.Open("ci-history")
//	e, err := history.NewEntry(history.KindSignoff, afterSummaryJSON)
//	e.Release, e.Pass = "v1.4.0", true
//	id, err := st.Append(e)
//	entries, warnings, err := st.List()
//	base, err := history.SelectBaseline(entries, "last", e.Profile, e.Environment.Variant)
//	deltas := history.CompareFigures(base.Figures, e.Figures, history.DefaultRules())
//
// The package reads summary.json through its documented schema
// (reports/SCHEMA.md), not through the reports package's Go types, so that
// history keeps working while those types move.
package history

// Package record writes a command's finished run or sign-off into a
// history directory (run and signoff --history DIR): it makes the entry
// from the run directory's summary.json, resolves the release under
// test, judges a sign-off against its baseline entry (signoff --baseline,
// writing the baseline reports) and appends the entry.
//
// It is apart from the history package because it reads the reports'
// verdicts and writes their baseline reports (reports, internal/app/render),
// which history itself must not import (render imports history); and apart
// from cmd/leakbench because run and signoff record by the same rules,
// tested without a command line.
//
//	r := &record.Recorder{Dir: "ci-history", Baseline: "last", Rules: history.DefaultRules(), Out: os.Stdout, Tables: os.Stdout, Warn: os.Stderr}
//	if err := r.Prepare("ci", "fixed"); err != nil { ... } // before any load: a wrong ID costs no run
//	regressed, err := r.Signoff(ctx, "out/signoff", cmp)   // judged, written, appended
package record

// Package capacity renders a capacity search (leakbench capacity): its
// summary.json (Summary: each Search, its Stages and the limits they
// tripped, the USL model and the sizing at the knee), written with its
// Markdown, HTML, JUnit and curve by Write, and the sign-off's view of it
// (Signoff: compare.json's capacity and the sign-off's Capacity section).
//
//	sum := &capacity.Summary{Capacity: capacity.Capacity{Searches: searches}}
//	err := capacity.Write(dir, sum) // summary.json, report.md, report.html, junit.xml, plots/capacity.*
//
// Package internal/app/capacity runs the search and fills the Summary;
// importers that need both name this one capreport. See SCHEMA.md in
// package reports, "capacity".
package capacity

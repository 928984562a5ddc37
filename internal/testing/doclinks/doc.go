// Package doclinks holds the test that keeps the documentation's links
// whole: every relative link in README.md and docs/**/*.md must name a
// file of the repository, and a #fragment must name a heading of it.
// A newcomer who follows a dead link stops reading; this test catches it
// in make test instead.
package doclinks

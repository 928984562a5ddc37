// Package layers holds the test that keeps leakbench's layers one way:
// scenario file → plan → engine → run directory → reports, with the run
// directory a leaf that every layer reads and none of them drags the stack
// in with, the application layer (internal/app) above the libraries and
// the CLI on top of it. It has no code; its test reads the import graph
// with `go list`.
package layers

package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bounds on a plan's content, besides the exported Max* limits.
const (
	maxScenarios     = 64
	maxSteps         = 1000 // per flow, nested steps included
	maxChooseDepth   = 8
	maxStages        = 1000
	maxIterations    = 1_000_000_000
	maxRatePerSecond = 100_000
	maxThinkTime     = time.Hour
	maxProblems      = 50
)

// ErrInvalidPlan matches (with errors.Is) every error about a plan's
// content, from the scenario-file decoder (package scenariofile),
// Plan.Validate and RunPlan.
var ErrInvalidPlan = errors.New("invalid scenario plan")

// Problems is the error of an invalid plan: its problems, each with where
// it is, one a line ("file:line: path: what is wrong"). It matches
// ErrInvalidPlan. Compile returns one, and so does the scenario-file
// decoder, with the file's own problems.
type Problems struct {
	File string // the scenario file ("": a plan built in Go)
	List []Problem
}

// Problem is one problem: its line in the file (0: none), the path of
// what it is about ("scenarios.s.vus"; "": the file) and what is wrong.
type Problem struct {
	Line      int
	Path, Msg string
}

func (e *Problems) Error() string {
	var b strings.Builder
	for i, p := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeProblem(&b, e.File, p)
	}
	return b.String()
}

// writeProblem writes p as "file:line: path: what is wrong", leaving out
// what is unknown.
func writeProblem(b *strings.Builder, file string, p Problem) {
	switch {
	case file != "" && p.Line > 0:
		fmt.Fprintf(b, "%s:%d: ", file, p.Line)
	case file != "":
		fmt.Fprintf(b, "%s: ", file)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
}

func (e *Problems) Is(target error) bool { return target == ErrInvalidPlan }

// Add records a problem once, however often the walk meets it.
func (e *Problems) Add(line int, path, format string, args ...any) {
	p := Problem{line, path, fmt.Sprintf(format, args...)}
	if len(e.List) < maxProblems && !slices.Contains(e.List, p) {
		e.List = append(e.List, p)
	}
}

func (e *Problems) err() error {
	if len(e.List) == 0 {
		return nil
	}
	return e
}

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
// content, from ParsePlan, LoadFile, Plan.Validate and RunPlan.
var ErrInvalidPlan = errors.New("invalid scenario plan")

// planError lists a plan's problems, each with where it is.
type planError struct {
	file     string
	problems []problem
}

type problem struct {
	line      int
	path, msg string
}

func (e *planError) Error() string {
	var b strings.Builder
	for i, p := range e.problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case e.file != "" && p.line > 0:
			fmt.Fprintf(&b, "%s:%d: ", e.file, p.line)
		case e.file != "":
			fmt.Fprintf(&b, "%s: ", e.file)
		}
		if p.path != "" {
			b.WriteString(p.path)
			b.WriteString(": ")
		}
		b.WriteString(p.msg)
	}
	return b.String()
}

func (e *planError) Is(target error) bool { return target == ErrInvalidPlan }

// add records a problem once, however often the walk meets it.
func (e *planError) add(line int, path, format string, args ...any) {
	p := problem{line, path, fmt.Sprintf(format, args...)}
	if len(e.problems) < maxProblems && !slices.Contains(e.problems, p) {
		e.problems = append(e.problems, p)
	}
}

func (e *planError) err() error {
	if len(e.problems) == 0 {
		return nil
	}
	return e
}

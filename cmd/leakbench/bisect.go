package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// bisectExit maps a command's result to git bisect run's exit codes when
// --bisect is given: a failed verdict (99) is bad (1); a run that could not
// be done (1) — a commit that does not build its gateway, a profile it
// cannot read — is skipped (125); bad usage (2) — a mistyped flag, an
// unknown variant — stops the bisect (128), since it fails alike at every
// commit; an interrupted run keeps 130, which stops it too, as Ctrl-C
// should.
func bisectExit(bisect bool, err error) error {
	switch {
	case !bisect || err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, runner.ErrInterrupted):
		return err
	case errors.Is(err, errVerdict):
		return &exitError{code: bisectBad, err: err}
	case errors.Is(err, cliflag.ErrUsage):
		return &exitError{code: bisectAbort, err: fmt.Errorf("%w (exit %d: stops git bisect run; fix the command line)", err, bisectAbort)}
	default:
		return &exitError{code: bisectSkip, err: err}
	}
}

// exit maps err for git bisect run when args ask for it (see bisectAsked).
func (h *historyFlags) exit(err error, args []string) error {
	return bisectExit(h.bisect || bisectAsked(args), err)
}

// bisectAsked reports whether args give --bisect (-bisect, --bisect=true):
// flag parsing stops at a mistyped flag before it reads a --bisect that
// comes after it, and that usage error must stop the bisect as well.
func bisectAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "bisect" {
			continue
		}
		if !hasVal {
			return true
		}
		b, err := strconv.ParseBool(val)
		return err == nil && b
	}
	return false
}

package main

import (
	"errors"
	"flag"

	"github.com/leakbench/leakbench/internal/app/runner"
)

// Exit codes git bisect run understands: 0 good, 1–127 but 125 bad, 125
// skip (this commit cannot be tested), anything above 127 stops the bisect.
const (
	bisectBad  = 1
	bisectSkip = 125
)

// exitError carries an exit code other than the one exitCode would derive
// from the error it wraps.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitErrorCode is the code of the exitError in err's chain.
func exitErrorCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitRunFailed
}

// bisectExit maps a command's result to git bisect run's exit codes when
// --bisect is given: a failed verdict (99) is bad (1); a run that could not
// be done (1) or bad usage (2) — a commit that does not build its gateway,
// a profile it cannot read — is skipped (125); an interrupted run keeps
// 130, which stops the bisect, as Ctrl-C should.
func bisectExit(bisect bool, err error) error {
	switch {
	case !bisect || err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, runner.ErrInterrupted):
		return err
	case errors.Is(err, errVerdict):
		return &exitError{code: bisectBad, err: err}
	default:
		return &exitError{code: bisectSkip, err: err}
	}
}

func (h *historyFlags) exit(err error) error { return bisectExit(h.bisect, err) }

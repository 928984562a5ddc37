package main

import (
	"errors"
	"flag"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// Every exit code leakbench gives, in one place (k6's
// errext/exitcodes). 99 for a failed verdict follows k6's convention for
// failed thresholds, so CI systems that know k6 read it right.
const (
	exitOK          = 0   // the verdict passed, or there was none to give
	exitRunFailed   = 1   // the run could not be done
	exitUsage       = 2   // the command line is wrong; nothing was run
	exitVerdict     = 99  // the run worked and its verdict failed
	exitInterrupted = 130 // Ctrl-C or SIGTERM; what was started was stopped
)

// Exit codes git bisect run understands (run and signoff --bisect): 0
// good, 1–127 but 125 bad, 125 skip (this commit cannot be tested),
// anything above 127 stops the bisect. bisectAbort is leakbench's for bad
// usage: the same command line fails at every commit, so skipping would
// skip them all.
const (
	bisectBad   = 1
	bisectSkip  = 125
	bisectAbort = 128
)

// errVerdict means the run worked but its verdict failed (exit 99). Bad
// usage (exit 2) is cliflag.ErrUsage, where the flags are parsed.
var errVerdict = errors.New("verdict failed")

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

// exitCode is the exit code of a subcommand's result.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(*exitError)):
		return exitErrorCode(err)
	case errors.Is(err, errVerdict):
		return exitVerdict
	case errors.Is(err, cliflag.ErrUsage):
		return exitUsage
	case errors.Is(err, runner.ErrInterrupted):
		return exitInterrupted
	default:
		return exitRunFailed
	}
}

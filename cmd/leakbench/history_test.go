package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

func TestBisectExit(t *testing.T) {
	tests := []struct {
		name   string
		bisect bool
		err    error
		code   int
	}{
		{"good", true, nil, 0},
		{"bad", true, fmt.Errorf("%w: see report", errVerdict), bisectBad},
		{"could not run", true, errors.New("start postgres: boom"), bisectSkip},
		{"bad usage stops the bisect", true, fmt.Errorf("%w: unknown variant", cliflag.ErrUsage), bisectAbort},
		{"interrupted stops the bisect", true, fmt.Errorf("after: %w", runner.ErrInterrupted), exitInterrupted},
		{"help", true, flag.ErrHelp, exitOK},
		{"without --bisect a verdict is 99", false, fmt.Errorf("%w: x", errVerdict), exitVerdict},
		{"without --bisect usage is 2", false, fmt.Errorf("%w: x", cliflag.ErrUsage), exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(bisectExit(tt.bisect, tt.err)); got != tt.code {
				t.Errorf("exit code %d, want %d", got, tt.code)
			}
		})
	}
}

// TestRunVerdictExits: a run whose report says FAIL exits 99 (errVerdict)
// whether or not it bisects, as k6 does for thresholds, so that a CI step
// running leakbench against its service fails; a shard's slice is not
// judged; a passing run exits 0.
func TestRunVerdictExits(t *testing.T) {
	failing := &reports.Run{Summary: &rundir.Summary{EndReason: rundir.EndCompleted,
		Probe: &rundir.ProbeSummary{StuckEpisodes: 3, TimeoutTerminated: 3, Samples: 10}}}
	passing := &reports.Run{Summary: &rundir.Summary{EndReason: rundir.EndCompleted, Probe: &rundir.ProbeSummary{Samples: 10}}}
	h := &historyFlags{}
	if err := h.recordRun(context.Background(), t.TempDir(), failing, true); !errors.Is(err, errVerdict) {
		t.Errorf("a failing run: %v, want errVerdict (exit 99)", err)
	}
	if err := h.recordRun(context.Background(), t.TempDir(), failing, false); err != nil {
		t.Errorf("a shard's failing slice: %v, want no verdict", err)
	}
	if err := h.recordRun(context.Background(), t.TempDir(), passing, true); err != nil {
		t.Errorf("a passing run: %v", err)
	}
}

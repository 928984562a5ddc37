package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/sizing"
)

// sizingFlags are --target-rate and --replicas: what the Sizing section
// of a probed run's report sizes the pool for (reports/sizing). Left out,
// the report sizes for the highest rate the run saw and says how many
// replicas fit; given, they must be usable (a rate above 0, one replica
// or more) — checked before any load.
type sizingFlags struct {
	fs       *flag.FlagSet
	rate     float64
	replicas int
}

func addSizingFlags(fs *flag.FlagSet) *sizingFlags {
	s := &sizingFlags{fs: fs}
	fs.Float64Var(&s.rate, "target-rate", 0, "size the pool for `R` requests a second (Sizing section; default: the highest rate the run saw in one second)")
	fs.IntVar(&s.replicas, "replicas", 0, "the service runs as `N` instances, each with its own pool: the Sizing section checks max_connections and PgBouncer's pool against N pools (default: it says how many fit)")
	return s
}

// options are the flags as given: a flag left out stays nil, so that
// --replicas 0 is an error and not "not given".
func (s *sizingFlags) options() (o sizing.Options, given bool, err error) {
	s.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "target-rate":
			o.TargetRate, given = &s.rate, true
		case "replicas":
			o.Replicas, given = &s.replicas, true
		}
	})
	if err := o.Validate(); err != nil {
		return o, given, fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	return o, given, nil
}

// size re-sizes the run in dir with the flags (only when one was given:
// every probed run is sized without them as it is rendered) and prints
// the ceiling it found.
func sizeRun(w io.Writer, dir string, o sizing.Options) error {
	sz, err := reports.SizeRun(dir, o)
	if errors.Is(err, sizing.ErrInput) {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if err != nil {
		return fmt.Errorf("size the pool of %s: %w", dir, err)
	}
	if sz != nil && sz.CeilingReqPerS > 0 {
		fmt.Fprintf(w, "sizing: the pool's ceiling is %.1f req/s at the measured hold; see the report's Sizing section\n", sz.CeilingReqPerS)
	}
	return nil
}

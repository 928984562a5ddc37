// Package sizing answers, for a probed run, what pool the measured hold
// asks for: the ceiling P/h of the pool it ran with, the pool a target
// rate R needs (R·h connections busy on average, plus the headroom Erlang
// C gives for a wait target), and whether PostgreSQL's max_connections
// and PgBouncer's default_pool_size have room for it across the
// service's replicas.
//
// Every figure is an input with its source — measured (and from what), a
// flag, the stack's configuration, or the model's stated target — and an
// input that was not measured is named, never assumed: the figures that
// needed it are left out.
//
//	sz, err := sizing.Size(summary, loadPoints, sizing.Options{Replicas: &three})
//	// sz.CeilingReqPerS, sz.PoolNeeded, sz.Checks …
//
// It is a leaf over the run directory's records (package rundir); package
// reports puts the result in summary.json and the reports (SizeRun). Lines,
// SectionHTML and HoldChange say a sizing in words, as the run's, the
// sign-off's and the capacity search's reports show it.
package sizing

import (
	"errors"
	"fmt"
	"math"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// ErrInput is bad input: a target rate of zero or less, zero replicas, a
// wait target outside (0, 1), or a run without the database view.
var ErrInput = errors.New("sizing")

// DefaultMaxWait is the model's wait target when none is given: a request
// finds every connection busy at most 5% of the time.
const DefaultMaxWait = 0.05

// Options are the sizing's flags; nil: not given.
type Options struct {
	// TargetRate is R in requests a second (--target-rate); nil: the
	// highest rate the run saw in one second.
	TargetRate *float64
	// Replicas is how many instances of the service run, each with its
	// own pool (--replicas); nil: not given, and the connection checks
	// say how many replicas fit instead.
	Replicas *int
	// MaxWaitProbability is the wait target of the model; 0:
	// DefaultMaxWait.
	MaxWaitProbability float64
}

// Validate says whether the options are usable, wrapping ErrInput.
func (o Options) Validate() error {
	if o.TargetRate != nil && (*o.TargetRate <= 0 || math.IsNaN(*o.TargetRate) || math.IsInf(*o.TargetRate, 0)) {
		return fmt.Errorf("%w: --target-rate %g: want a rate above 0 requests a second (or leave it out for the highest rate the run saw)", ErrInput, *o.TargetRate)
	}
	if o.Replicas != nil && *o.Replicas <= 0 {
		return fmt.Errorf("%w: --replicas %d: want 1 or more instances of the service (or leave it out)", ErrInput, *o.Replicas)
	}
	if w := o.MaxWaitProbability; w < 0 || w >= 1 {
		return fmt.Errorf("%w: wait target %g: want a probability above 0 and below 1", ErrInput, w)
	}
	return nil
}

// FromRecorded returns the options a sizing was made with, to make it
// again.
func FromRecorded(o rundir.SizingOptions) Options {
	return Options{TargetRate: o.TargetReqPerS, Replicas: o.Replicas, MaxWaitProbability: o.MaxWaitProbability}
}

// modelName says the model and its target.
func modelName(maxWait float64) string {
	return fmt.Sprintf("Erlang C (M/M/c: requests arriving at random, holds of random length): the smallest pool at which a request finds every connection busy with probability at most %g%%", 100*maxWait)
}

// Size sizes the run whose summary is s and whose per-second load is
// points (load.jsonl; nil without a load). A run without a probe is
// ErrInput: sizing needs the database view.
func Size(s *rundir.Summary, points []rundir.LoadPoint, o Options) (*rundir.Sizing, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if s == nil || s.Probe == nil {
		return nil, fmt.Errorf("%w: the run was not probed: sizing needs the database view (give the run a probe DSN)", ErrInput)
	}
	if o.MaxWaitProbability == 0 {
		o.MaxWaitProbability = DefaultMaxWait
	}
	b := &builder{sz: &rundir.Sizing{Model: modelName(o.MaxWaitProbability),
		Options: rundir.SizingOptions{TargetReqPerS: o.TargetRate, Replicas: o.Replicas, MaxWaitProbability: o.MaxWaitProbability}}}
	pool := b.poolSize(s)
	h := b.hold(s)
	b.serviceFigures(s)
	if pool > 0 && h > 0 {
		b.sz.CeilingReqPerS = float64(pool) / h
	}
	r := b.target(s, points, o)
	if h > 0 && r > 0 {
		a := r * h
		c, p, w := poolFor(a, o.MaxWaitProbability)
		b.sz.TargetReqPerS, b.sz.OfferedConnections = r, a
		b.sz.PoolNeeded, b.sz.WaitProbability, b.sz.MeanWaitSeconds = c, p, w*h
		b.input("pool needed at R", float64(c), "connections", "model: "+b.sz.Model)
	}
	b.checks(s, pool, o.Replicas)
	return b.sz, nil
}

type builder struct{ sz *rundir.Sizing }

func (b *builder) input(name string, v float64, unit, source string) {
	b.sz.Inputs = append(b.sz.Inputs, rundir.SizingInput{Name: name, Value: &v, Unit: unit, Source: source})
}

func (b *builder) missing(name, unit, why string) {
	b.missingAs("not measured: ", name, unit, why)
}

// missingAs records an input nobody gave or measured; source says which.
func (b *builder) missingAs(source, name, unit, why string) {
	b.sz.Inputs = append(b.sz.Inputs, rundir.SizingInput{Name: name, Unit: unit, Source: source + why})
	b.sz.Missing = append(b.sz.Missing, name+": "+why)
}

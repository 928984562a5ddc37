package plots

import (
	"maps"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"gonum.org/v1/plot/plotter"
)

// Drawing a long run from part of its samples: a run read a record at a
// time (reports.LoadRun) keeps every sample only while there are at most
// 4×plotBuckets of them. Of a longer run a Keeper reads samples.jsonl a
// second time for the samples the plots need: of each plotted line, in
// each of the thinner's time buckets, the samples carrying its first,
// lowest, highest and last point. The thinner, run over those samples,
// draws exactly the points it would draw from all of them. The service
// pool's counter rates, which need every pair of successive scrapes, are
// drawn in that pass (Rates), and the release-latency histogram takes
// each episode as it is read (Holds).

// Keeper keeps, of a run's samples given to it one at a time, those its
// plots draw.
type Keeper struct {
	n int
	// all holds every sample while there are at most 4×plotBuckets.
	all []rundir.Sample
	// witnesses are the samples the panels' checks look for, by position
	// in the file: the first sample, the first with each optional part or
	// rare state; last is the last sample.
	witnesses map[int]rundir.Sample
	seen      [len(witnessParts)]bool
	last      rundir.Sample
}

// witnessParts are what a panel may look for in any sample before it
// draws (hasPgBouncer, the states panel's rare layers).
var witnessParts = [...]func(*rundir.Sample) bool{
	func(s *rundir.Sample) bool { return s.PgBouncer != nil },
	func(s *rundir.Sample) bool { return s.AppPool != nil },
	func(s *rundir.Sample) bool { return s.Database != nil },
	func(s *rundir.Sample) bool { return s.OldestIdleInTx != nil },
	func(s *rundir.Sample) bool { return s.States.Other > 0 },
	func(s *rundir.Sample) bool { return s.States.IdleInTxAborted > 0 },
	func(s *rundir.Sample) bool { return isGap(s) },
}

// NewKeeper returns a Keeper that has been given no sample yet.
func NewKeeper() *Keeper { return &Keeper{witnesses: map[int]rundir.Sample{}} }

// Add gives the Keeper the run's next sample.
func (k *Keeper) Add(s *rundir.Sample) {
	i := k.n
	k.n++
	if k.n <= 4*plotBuckets {
		k.all = append(k.all, *s)
	} else {
		k.all = nil
	}
	witness := i == 0
	for j, has := range witnessParts {
		if !k.seen[j] && has(s) {
			k.seen[j], witness = true, true
		}
	}
	if witness {
		k.witnesses[i] = *s
	}
	k.last = *s
}

// Samples returns the samples r's plots draw of those the Keeper was
// given, and the service pool's counter rates drawn from all of them (nil
// when every sample is kept). r is the run the samples are of: its summary,
// load and episodes (its Samples are not read). A run of more than
// 4×plotBuckets (4,000) samples is read a second time: replay must call
// each with the first n samples the Keeper was given, in the same order,
// each in a value of its own.
func (k *Keeper) Samples(r *Run, replay func(n int, each func(*rundir.Sample)) error) ([]rundir.Sample, *Rates, error) {
	if k.n <= 4*plotBuckets {
		return k.all, nil, nil
	}
	keep := k.witnessed()
	witnesses := inFileOrder(keep)
	origin := witnesses[0].Time
	x1 := witnesses[len(witnesses)-1].Time.Sub(origin).Seconds()
	if !(x1 > 0) { // the thinner keeps such a line whole
		samples := witnesses[:0]
		err := replay(k.n, func(s *rundir.Sample) { samples = append(samples, *s) })
		return samples, nil, err
	}
	width := x1 / plotBuckets // the thinner's, from x0 = 0
	wr := *r
	wr.Samples = witnesses
	d := discoverSeries(&wr)
	keepers := make([]keeper, len(d.points))
	for i, y := range d.points {
		keepers[i].y = y
	}
	rates := make([]rateLine, len(d.rates))
	for i, rs := range d.rates {
		rates[i] = rateLine{th: newThinner(0, x1, k.n), f: rs.f, origin: origin}
	}
	i := 0
	err := replay(k.n, func(s *rundir.Sample) {
		x := s.Time.Sub(origin).Seconds()
		for j := range keepers {
			keepers[j].add(width, i, x, s, keep)
		}
		for j := range rates {
			rates[j].add(s)
		}
		i++
	})
	if err != nil {
		return nil, nil, err
	}
	for j := range keepers {
		keepers[j].flush(keep)
	}
	rt := &Rates{lines: map[string]plotter.XYs{}}
	for j, rs := range d.rates {
		rt.lines[rs.key] = rates[j].th.done()
	}
	return inFileOrder(keep), rt, nil
}

// Rates are the service pool's counter rates of every sample of a run,
// drawn as a Keeper read them: what the service pool plot draws of a run
// whose Samples hold only some.
type Rates struct {
	// lines by counterRate's key
	lines map[string]plotter.XYs
}

// witnessed returns the witnesses and the last sample by position.
func (k *Keeper) witnessed() map[int]rundir.Sample {
	w := maps.Clone(k.witnesses)
	w[k.n-1] = k.last
	return w
}

// inFileOrder returns the samples of m ordered by their position.
func inFileOrder(m map[int]rundir.Sample) []rundir.Sample {
	out := make([]rundir.Sample, 0, len(m))
	for _, i := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[i])
	}
	return out
}

// seriesSet is what the panels plot from samples, as discoverSeries finds
// it: the lines sampleXYs draws and the rates counterRate draws.
type seriesSet struct {
	points []func(*rundir.Sample) (float64, bool)
	rates  []rateSeries
}

type rateSeries struct {
	key string
	f   func(*rundir.AppPoolSample) float64
}

// discoverSeries builds every panel of r once with r.discover set, so
// that sampleXYs and counterRate note the series they are asked for
// instead of drawing them. r.Samples must already answer the panels'
// checks (hasPgBouncer and the like) as all the samples would: they hold
// the Keeper's witnesses.
func discoverSeries(r *Run) *seriesSet {
	d := &seriesSet{}
	r.discover = d
	defer func() { r.discover = nil }()
	for _, f := range figures() {
		for _, mk := range f.panels {
			mk(r)
		}
	}
	return d
}

// keeper follows one line through the samples as the thinner does and
// keeps the samples carrying each bucket's first, lowest, highest and
// last point.
type keeper struct {
	y                   func(*rundir.Sample) (float64, bool)
	open                bool
	bucket              int
	first, lo, hi, last keptPoint
}

type keptPoint struct {
	i int
	y float64
	s *rundir.Sample
}

// add is thinner.add for the sample at position i, x seconds after the
// origin, with buckets width wide from 0.
func (k *keeper) add(width float64, i int, x float64, s *rundir.Sample, keep map[int]rundir.Sample) {
	v, ok := k.y(s)
	if !ok || isGap(s) || !finite(v) {
		return
	}
	b := int(x / width)
	p := keptPoint{i, v, s}
	if !k.open || b != k.bucket {
		k.flush(keep)
		k.open, k.bucket = true, b
		k.first, k.lo, k.hi, k.last = p, p, p, p
		return
	}
	if v < k.lo.y {
		k.lo = p
	}
	if v > k.hi.y {
		k.hi = p
	}
	k.last = p
}

func (k *keeper) flush(keep map[int]rundir.Sample) {
	if !k.open {
		return
	}
	k.open = false
	for _, p := range [...]keptPoint{k.first, k.lo, k.hi, k.last} {
		keep[p.i] = *p.s
	}
}

// rateLine is counterRate's line, a sample at a time: the per-second rate
// of a service pool counter between successive scrapes.
type rateLine struct {
	th     *thinner
	f      func(*rundir.AppPoolSample) float64
	origin time.Time
	prev   *rundir.Sample
}

func (l *rateLine) add(s *rundir.Sample) {
	if s.AppPool == nil {
		return
	}
	if l.prev != nil {
		dt := s.Time.Sub(l.prev.Time).Seconds()
		if dv := l.f(s.AppPool) - l.f(l.prev.AppPool); dt > 0 && dv >= 0 {
			l.th.add(plotter.XY{X: s.Time.Sub(l.origin).Seconds(), Y: dv / dt})
		}
	}
	l.prev = s
}

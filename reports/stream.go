package reports

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/json"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/leakbench/leakbench/probes"
	"gonum.org/v1/plot/plotter"
)

// Reading a run directory in memory that does not grow with the run: a
// day of 100 ms samples at a thousand connections, with a million
// episodes, renders in about what an hour does (BenchmarkReportDay).
//
// samples.jsonl is read once for what needs every sample exactly (the
// pool verdict, the rebuilt summary of a killed run, counts) and, when the
// run has more samples than its plots draw whole (more than 4×plotBuckets),
// a second time for the samples the plots need: of each plotted line, in
// each of the thinner's time buckets, the samples carrying its first,
// lowest, highest and last point. The thinner, run over those samples,
// draws exactly the points it would draw from all of them. episodes.jsonl
// is read once: the release-latency histogram, the forensics and the
// summary take each episode as it comes, and only the worst episodes are
// kept whole.

// maxRunEpisodes bounds Run.Episodes: a run with more keeps its
// maxRunEpisodes worst (longest held) episodes whole.
const maxRunEpisodes = 10_000

// eachJSONL calls fn with each line of rd that decodes as a T, at most
// limit of them (limit < 0: all), each in a value of its own. Lines that
// do not decode are counted, not fatal: a killed run may leave its last
// line half written.
func eachJSONL[T any](rd io.Reader, limit int, fn func(*T)) (bad int, err error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 0; n != limit && sc.Scan(); {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v := new(T)
		if json.Unmarshal(line, v) != nil {
			bad++
			continue
		}
		fn(v)
		n++
	}
	return bad, sc.Err()
}

// sampleScan is the first pass over samples.jsonl.
type sampleScan struct {
	n    int
	pool poolAcc
	// all holds every sample while there are at most 4×plotBuckets.
	all []Sample
	// witnesses are the samples the panels' checks look for, by position
	// in the file: the first sample, the first with each optional part or
	// rare state; last is the last sample.
	witnesses map[int]Sample
	seen      [len(witnessParts)]bool
	last      Sample
}

// witnessParts are what a panel may look for in any sample before it
// draws (hasPgBouncer, the states panel's rare layers).
var witnessParts = [...]func(*Sample) bool{
	func(s *Sample) bool { return s.PgBouncer != nil },
	func(s *Sample) bool { return s.AppPool != nil },
	func(s *Sample) bool { return s.Database != nil },
	func(s *Sample) bool { return s.OldestIdleInTx != nil },
	func(s *Sample) bool { return s.States.Other > 0 },
	func(s *Sample) bool { return s.States.IdleInTxAborted > 0 },
	func(s *Sample) bool { return isGap(s) },
}

func newSampleScan() *sampleScan { return &sampleScan{witnesses: map[int]Sample{}} }

func (sc *sampleScan) add(s *Sample) {
	i := sc.n
	sc.n++
	sc.pool.add(s)
	if sc.n <= 4*plotBuckets {
		sc.all = append(sc.all, *s)
	} else {
		sc.all = nil
	}
	witness := i == 0
	for k, has := range witnessParts {
		if !sc.seen[k] && has(s) {
			sc.seen[k], witness = true, true
		}
	}
	if witness {
		sc.witnesses[i] = *s
	}
	sc.last = *s
}

// witnessed returns the witnesses and the last sample by position.
func (sc *sampleScan) witnessed() map[int]Sample {
	w := maps.Clone(sc.witnesses)
	w[sc.n-1] = sc.last
	return w
}

// inFileOrder returns the samples of m ordered by their position.
func inFileOrder(m map[int]Sample) []Sample {
	out := make([]Sample, 0, len(m))
	for _, i := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[i])
	}
	return out
}

// seriesSet is what the panels plot from samples, as discoverSeries finds
// it: the lines sampleXYs draws and the rates counterRate draws.
type seriesSet struct {
	points []func(*Sample) (float64, bool)
	rates  []rateSeries
}

type rateSeries struct {
	key string
	f   func(*AppPoolSample) float64
}

// discoverSeries builds every panel of r once with r.discover set, so
// that sampleXYs and counterRate note the series they are asked for
// instead of drawing them. r.Samples must already answer the panels'
// checks (hasPgBouncer and the like) as all the samples would: they hold
// the scan's witnesses.
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
	y                   func(*Sample) (float64, bool)
	open                bool
	bucket              int
	first, lo, hi, last keptPoint
}

type keptPoint struct {
	i int
	y float64
	s *Sample
}

// add is thinner.add for the sample at position i, x seconds after the
// origin, with buckets width wide from 0.
func (k *keeper) add(width float64, i int, x float64, s *Sample, keep map[int]Sample) {
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

func (k *keeper) flush(keep map[int]Sample) {
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
	f      func(*AppPoolSample) float64
	origin time.Time
	prev   *Sample
}

func (l *rateLine) add(s *Sample) {
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

// reduceSamples is the second pass over samples.jsonl (at path) of a run
// with more samples than its plots draw whole: r.Samples becomes the
// samples the plots need, in file order, and r.rates the service pool's
// counter rates, thinned.
func (r *Run) reduceSamples(path string, sc *sampleScan) error {
	keep := sc.witnessed()
	r.Samples = inFileOrder(keep)
	origin := r.Samples[0].Time
	x1 := r.Samples[len(r.Samples)-1].Time.Sub(origin).Seconds()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if !(x1 > 0) { // the thinner keeps such a line whole
		r.Samples = r.Samples[:0]
		_, err := eachJSONL(f, sc.n, func(s *Sample) { r.Samples = append(r.Samples, *s) })
		return err
	}
	width := x1 / plotBuckets // the thinner's, from x0 = 0
	d := discoverSeries(r)
	keepers := make([]keeper, len(d.points))
	for i, y := range d.points {
		keepers[i].y = y
	}
	rates := make([]rateLine, len(d.rates))
	for i, rs := range d.rates {
		rates[i] = rateLine{th: newThinner(0, x1, sc.n), f: rs.f, origin: origin}
	}
	i := 0
	_, err = eachJSONL(f, sc.n, func(s *Sample) {
		x := s.Time.Sub(origin).Seconds()
		for k := range keepers {
			keepers[k].add(width, i, x, s, keep)
		}
		for k := range rates {
			rates[k].add(s)
		}
		i++
	})
	if err != nil {
		return err
	}
	for k := range keepers {
		keepers[k].flush(keep)
	}
	r.Samples = inFileOrder(keep)
	r.rates = map[string]plotter.XYs{}
	for k, rs := range d.rates {
		r.rates[rs.key] = rates[k].th.done()
	}
	return nil
}

// holdBins is the release-latency histogram of a run's episodes, binned
// as they are read, stuck ones (held ≥ stuckAfter, when above 0) apart.
type holdBins struct {
	stuckAfter float64
	h          histogram
}

func newHoldBins(stuckAfter float64) *holdBins {
	return &holdBins{stuckAfter: stuckAfter, h: histogram{released: map[int]int{}, stuck: map[int]int{}, lo: math.MaxInt, hi: math.MinInt}}
}

func (b *holdBins) add(hold float64) {
	k := binOf(hold)
	if b.stuckAfter > 0 && hold >= b.stuckAfter {
		b.h.stuck[k]++
	} else {
		b.h.released[k]++
	}
	b.h.lo, b.h.hi = min(b.h.lo, k), max(b.h.hi, k)
}

// worstEpisodes keeps the n worst episodes it is given: held longest,
// earliest first among equals. It is a heap whose root is the least bad.
type worstEpisodes struct {
	n    int
	seq  int
	heap []seqEpisode
}

type seqEpisode struct {
	seq int
	e   probes.Episode
}

// better reports whether a is less bad than b.
func better(a, b *seqEpisode) bool {
	return cmp.Or(cmp.Compare(a.e.HoldSeconds, b.e.HoldSeconds), b.e.Start.Compare(a.e.Start), cmp.Compare(b.seq, a.seq)) < 0
}

func (w *worstEpisodes) Len() int           { return len(w.heap) }
func (w *worstEpisodes) Less(i, j int) bool { return better(&w.heap[i], &w.heap[j]) }
func (w *worstEpisodes) Swap(i, j int)      { w.heap[i], w.heap[j] = w.heap[j], w.heap[i] }
func (w *worstEpisodes) Push(x any)         { w.heap = append(w.heap, x.(seqEpisode)) }
func (w *worstEpisodes) Pop() any {
	x := w.heap[len(w.heap)-1]
	w.heap = w.heap[:len(w.heap)-1]
	return x
}

func (w *worstEpisodes) add(e *probes.Episode) {
	x := seqEpisode{w.seq, *e}
	w.seq++
	switch {
	case len(w.heap) < w.n:
		heap.Push(w, x)
	case better(&w.heap[0], &x):
		w.heap[0] = x
		heap.Fix(w, 0)
	}
}

// episodes returns the episodes kept, in the order they came.
func (w *worstEpisodes) episodes() []probes.Episode {
	slices.SortFunc(w.heap, func(a, b seqEpisode) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]probes.Episode, len(w.heap))
	for i := range w.heap {
		out[i] = w.heap[i].e
	}
	return out
}

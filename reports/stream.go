package reports

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/leakbench/leakbench/probes"
)

// Reading a run directory in memory that does not grow with the run: a
// day of 100 ms samples at a thousand connections, with a million
// episodes, renders in about what an hour does (BenchmarkReportDay).
//
// samples.jsonl is read once for what needs every sample exactly (the
// pool verdict, the rebuilt summary of a killed run, counts) and, when the
// run has more samples than its plots draw whole (more than 4,000), a
// second time for the samples the plots need (plots.Keeper), which draw
// exactly as all of them would. episodes.jsonl is read once: the
// release-latency histogram (plots.Holds), the forensics and the summary
// take each episode as it comes, and only the worst episodes are kept
// whole.

// maxRunEpisodes bounds Run.Episodes: a run with more keeps its
// maxRunEpisodes worst (longest held) episodes whole.
const maxRunEpisodes = 10_000

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

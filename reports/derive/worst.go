package derive

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Worst keeps the n worst episodes it is given: held longest, earliest
// first among equals, in memory that does not grow past n.
type Worst struct {
	n    int
	seq  int
	heap episodeHeap
}

// NewWorst keeps at most n episodes.
func NewWorst(n int) *Worst { return &Worst{n: n} }

// Add takes the next episode.
func (w *Worst) Add(e *rundir.Episode) {
	x := seqEpisode{w.seq, *e}
	w.seq++
	switch {
	case len(w.heap) < w.n:
		heap.Push(&w.heap, x)
	case better(&w.heap[0], &x):
		w.heap[0] = x
		heap.Fix(&w.heap, 0)
	}
}

// Episodes returns the episodes kept, in the order they came.
func (w *Worst) Episodes() []rundir.Episode {
	slices.SortFunc(w.heap, func(a, b seqEpisode) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]rundir.Episode, len(w.heap))
	for i := range w.heap {
		out[i] = w.heap[i].e
	}
	return out
}

// episodeHeap is a heap whose root is the least bad episode kept.
type episodeHeap []seqEpisode

type seqEpisode struct {
	seq int
	e   rundir.Episode
}

// better reports whether a is less bad than b.
func better(a, b *seqEpisode) bool {
	return cmp.Or(cmp.Compare(a.e.HoldSeconds, b.e.HoldSeconds), b.e.Start.Compare(a.e.Start), cmp.Compare(b.seq, a.seq)) < 0
}

func (h episodeHeap) Len() int           { return len(h) }
func (h episodeHeap) Less(i, j int) bool { return better(&h[i], &h[j]) }
func (h episodeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *episodeHeap) Push(x any)        { *h = append(*h, x.(seqEpisode)) }
func (h *episodeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

package probes

import "testing"

// TestTransitiveBlockers: a waiter is charged to everyone ahead of it in a
// chain, each once, and a cycle ends the walk.
func TestTransitiveBlockers(t *testing.T) {
	graph := map[int32][]int32{2: {1}, 3: {2}, 4: {3, 1}, 5: {6}, 6: {5}}
	next := func(p int32) []int32 { return graph[p] }
	for _, tt := range []struct {
		direct []int32
		want   int
	}{{[]int32{1}, 1}, {[]int32{2}, 2}, {[]int32{3}, 3}, {[]int32{4}, 4}, {[]int32{5}, 2}, {nil, 0}} {
		if got := transitiveBlockers(tt.direct, next); len(got) != tt.want {
			t.Errorf("%v: %v, want %d backends", tt.direct, got, tt.want)
		}
	}
}

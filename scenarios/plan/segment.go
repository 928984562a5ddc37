package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds the shards a plan is split into.
const MaxShards = 1000

// Segment is one of Count equal slices of a plan, k6's execution segment
// Index/Count:(Index+1)/Count in the segment sequence 0, 1/Count, ..., 1.
// The zero Segment (and any with Count <= 1) is the whole plan.
//
// The slices add up to the whole exactly, as k6's striping does: of n
// users (or arrival-rate iterations) in index order, the segment owns
// those k with k % Count == Index, so its share of n is n/Count rounded
// down or up, the shares of all segments sum to n, and a segment's share
// never falls when n grows (a ramp stays a ramp in every shard). Its users
// get the user indices of a block of their own — offset by the shares of
// the earlier segments — so tokens and data rows never repeat across
// shards. Arrival rates are scaled by the share: the segment plays
// iterations Index, Index+Count, ... of the whole plan's schedule, at the
// times the whole plan would (see [Segment.Iteration]).
type Segment struct {
	Index, Count int
}

// ParseSegment reads "i/N" (0 <= i < N <= MaxShards), as --shard takes it.
func ParseSegment(s string) (Segment, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Segment{}, fmt.Errorf("bad shard %q: want INDEX/COUNT, e.g. 0/3", s)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err := errors.Join(err1, err2); err != nil {
		return Segment{}, fmt.Errorf("bad shard %q: want INDEX/COUNT, e.g. 0/3", s)
	}
	if n < 1 || n > MaxShards {
		return Segment{}, fmt.Errorf("bad shard %q: the count must be 1 to %d", s, MaxShards)
	}
	if i < 0 || i >= n {
		return Segment{}, fmt.Errorf("bad shard %q: the index must be 0 to %d (indices count from 0)", s, n-1)
	}
	return Segment{Index: i, Count: n}, nil
}

// String is "i/N"; the whole plan is "0/1".
func (s Segment) String() string {
	if s.Whole() {
		return "0/1"
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Whole reports whether s is the whole plan.
func (s Segment) Whole() bool { return s.Count <= 1 }

// Share is how many of n users (or iterations) in index order the segment
// owns: those k < n with k % Count == Index.
func (s Segment) Share(n int) int {
	if s.Whole() {
		return n
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Start is the first user index of the segment's block of n: the shares
// of the segments before it.
func (s Segment) Start(n int) int {
	if s.Whole() {
		return 0
	}
	start := 0
	for j := range s.Index {
		start += Segment{Index: j, Count: s.Count}.Share(n)
	}
	return start
}

// Iteration is the number, in the whole plan's arrival-rate schedule, of
// the segment's k-th iteration (from 0).
func (s Segment) Iteration(k int64) int64 {
	if s.Whole() {
		return k
	}
	return k*int64(s.Count) + int64(s.Index)
}

// Apply returns the segment's slice of cp (cp itself when s is the whole
// plan) and the user index of each scenario's first user in it. Virtual
// users (vus, startVUs, ramping targets, preAllocatedVUs, maxVUs) are
// split by Share; per-VU iterations stay per VU, so the total splits with
// the users; arrival rates stay as written in the plan, and the engine
// plays every Count-th iteration of the schedule (Segment.Iteration).
// A scenario may get no user in a segment (1 VU over 3 shards); it then
// plays nothing there, as in k6.
func (s Segment) Apply(cp *Compiled) (*Compiled, []int) {
	bases := make([]int, len(cp.Scenarios))
	base := 0
	if s.Whole() {
		for i, cs := range cp.Scenarios {
			bases[i] = base
			base += cs.Users
		}
		return cp, bases
	}
	out := *cp
	out.Scenarios = make([]*CompiledScenario, len(cp.Scenarios))
	for i, cs := range cp.Scenarios {
		bases[i] = base + s.Start(cs.Users)
		base += cs.Users
		c := *cs
		sc := *cs.Scenario
		c.Scenario = &sc
		switch sc.Executor {
		case ExecConstantVUs, ExecPerVUIterations:
			sc.VUs = s.Share(sc.VUs)
		case ExecRampingVUs:
			sc.StartVUs = s.Share(sc.StartVUs)
			sc.Stages = make([]Stage, len(cs.Stages))
			for k, st := range cs.Stages {
				st.Target = s.Share(st.Target)
				sc.Stages[k] = st
			}
		case ExecConstantArrivalRate, ExecRampingArrivalRate:
			sc.PreAllocatedVUs = s.Share(sc.PreAllocatedVUs)
			sc.MaxVUs = s.Share(sc.MaxVUs)
		case ExecExternallyControlled:
			// Each shard is scaled on its own (its own dashboard).
			sc.VUs, sc.MaxVUs = s.Share(sc.VUs), s.Share(sc.MaxVUs)
		}
		c.Users = s.Share(cs.Users)
		out.Scenarios[i] = &c
	}
	return &out, bases
}

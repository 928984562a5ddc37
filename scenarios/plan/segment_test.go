package plan_test

import (
	"fmt"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// segmentPlans are plans whose slices must add up to the whole.
var segmentPlans = []string{`
scenarios:
  one: {executor: constant-vus, vus: 1, duration: 10s, flow: [ping]}
`, `
scenarios:
  a: {executor: constant-vus, vus: 50, duration: 10s, flow: [ping]}
  b: {executor: per-vu-iterations, vus: 7, iterations: 13, flow: [ping]}
`, `
scenarios:
  ramp:
    executor: ramping-vus
    startVUs: 3
    stages: [{duration: 5s, target: 11}, {duration: 5s, target: 2}, {duration: 5s, target: 29}, {duration: 5s, target: 0}]
    flow: [ping]
  rate: {executor: constant-arrival-rate, rate: 17, timeUnit: 1s, duration: 3s, preAllocatedVUs: 5, maxVUs: 23, flow: [ping]}
  ramprate:
    executor: ramping-arrival-rate
    startRate: 2
    timeUnit: 1s
    preAllocatedVUs: 1
    maxVUs: 9
    stages: [{duration: 4s, target: 31}, {duration: 2s, target: 0}]
    flow: [ping]
`}

func compileSegmentPlan(t *testing.T, src string) *plan.Compiled {
	t.Helper()
	p, err := scenariofile.Parse([]byte(src), "segments.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := plan.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func TestSegmentsAddUpToTheWhole(t *testing.T) {
	for pi, src := range segmentPlans {
		whole := compileSegmentPlan(t, src)
		for n := 1; n <= 7; n++ {
			t.Run(fmt.Sprintf("plan%d/%dshards", pi, n), func(t *testing.T) {
				type sums struct{ users, vus, startVUs, iterations, pre, maxVUs int64 }
				got := make([]sums, len(whole.Scenarios))
				stageSums := make([][]int, len(whole.Scenarios))
				totalUsers := 0
				for _, cs := range whole.Scenarios {
					totalUsers += cs.Users
				}
				for i := range whole.Scenarios {
					stageSums[i] = make([]int, len(whole.Scenarios[i].Stages))
				}
				owner := make([]int, totalUsers) // user index -> shard+1
				for i := range n {
					seg := plan.Segment{Index: i, Count: n}
					cp, bases := seg.Apply(whole)
					for s, cs := range cp.Scenarios {
						g := &got[s]
						g.users += int64(cs.Users)
						g.vus += int64(cs.VUs)
						g.startVUs += int64(cs.StartVUs)
						g.iterations += int64(cs.VUs) * cs.Iterations
						g.pre += int64(cs.PreAllocatedVUs)
						g.maxVUs += int64(cs.MaxVUs)
						for k, st := range cs.Stages {
							if cs.Executor == plan.ExecRampingVUs {
								stageSums[s][k] += st.Target
							} else if st.Target != whole.Scenarios[s].Stages[k].Target {
								t.Errorf("shard %d: %s: rate target changed in the plan: %d", i, cs.Name, st.Target)
							}
						}
						for u := bases[s]; u < bases[s]+cs.Users; u++ {
							if owner[u] != 0 {
								t.Fatalf("user %d played by shards %d and %d", u, owner[u]-1, i)
							}
							owner[u] = i + 1
						}
						// The whole plan's scenario's own users are the block
						// of the scenario, wherever the shard's lies.
						if first := wholeBase(whole, s); bases[s] < first || bases[s]+cs.Users > first+whole.Scenarios[s].Users {
							t.Errorf("shard %d: %s: users %d..%d outside the scenario's block", i, cs.Name, bases[s], bases[s]+cs.Users)
						}
					}
				}
				for u, o := range owner {
					if o == 0 {
						t.Errorf("user %d played by no shard", u)
					}
				}
				for s, cs := range whole.Scenarios {
					w := sums{int64(cs.Users), int64(cs.VUs), int64(cs.StartVUs), int64(cs.VUs) * cs.Iterations,
						int64(cs.PreAllocatedVUs), int64(cs.MaxVUs)}
					if got[s] != w {
						t.Errorf("%s: shards sum to %+v, whole is %+v", cs.Name, got[s], w)
					}
					if cs.Executor == plan.ExecRampingVUs {
						for k, st := range cs.Stages {
							if stageSums[s][k] != st.Target {
								t.Errorf("%s: stage %d: shards' targets sum to %d, whole is %d", cs.Name, k, stageSums[s][k], st.Target)
							}
						}
					}
				}
				// Arrival-rate iterations: every iteration of the whole
				// schedule is played by exactly one shard.
				const iterations = 1000
				played := make([]int, iterations)
				for i := range n {
					seg := plan.Segment{Index: i, Count: n}
					for k := int64(0); ; k++ {
						it := seg.Iteration(k)
						if it >= iterations {
							break
						}
						played[it]++
					}
				}
				for it, c := range played {
					if c != 1 {
						t.Fatalf("iteration %d played %d times", it, c)
					}
				}
			})
		}
	}
}

func wholeBase(cp *plan.Compiled, s int) int {
	b := 0
	for _, cs := range cp.Scenarios[:s] {
		b += cs.Users
	}
	return b
}

// A shard's share of a growing count never falls: a ramp up stays a ramp
// up in every shard.
func TestSegmentShareMonotone(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for i := range n {
			seg := plan.Segment{Index: i, Count: n}
			prev := 0
			for v := 0; v <= 200; v++ {
				sh := seg.Share(v)
				if sh < prev {
					t.Fatalf("%s: share of %d is %d, of %d it was %d", seg, v, sh, v-1, prev)
				}
				if sh != v/n && sh != (v+n-1)/n {
					t.Fatalf("%s: share of %d is %d, not floor or ceil of %d/%d", seg, v, sh, v, n)
				}
				prev = sh
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want plan.Segment
		bad  bool
	}{
		{in: "0/1", want: plan.Segment{0, 1}},
		{in: "2/3", want: plan.Segment{2, 3}},
		{in: " 0/7 ", want: plan.Segment{0, 7}},
		{in: "3/3", bad: true},
		{in: "-1/3", bad: true},
		{in: "1/0", bad: true},
		{in: "1", bad: true},
		{in: "a/b", bad: true},
		{in: "0/1001", bad: true},
	} {
		got, err := plan.ParseSegment(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("ParseSegment(%q) = %v, %v", tc.in, got, err)
		}
	}
}

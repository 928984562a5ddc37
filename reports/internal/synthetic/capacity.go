package synthetic

import "github.com/leakbench/leakbench/reports/capacity"

// Capacity is a capacity search of two variants: commit-in-finally
// held 12 users and broke at 13, fixed held 40 and broke at 44, each on
// the pool exhausted at 4.5 s into the stage; and the change between them.
func Capacity() *capacity.Summary {
	limitAt := 4.5
	stage := func(i, load int, held bool, p95 float64) capacity.Stage {
		st := capacity.Stage{Index: i, Load: load, Dir: "stage", Held: held, ReqPerSecond: float64(load) * 2, P50Ms: 100, P95Ms: p95, P99Ms: p95 * 1.2, Probed: true, ServiceConns: min(load, 10), AppPoolMax: 10, AppPoolPeak: float64(min(load, 10))}
		if !held {
			at := 4.5
			st.Trips = []capacity.Trip{{Limit: "pool exhausted", Detail: "service pool at its max (10/10) for 2.0 s", Resource: "the service's connection pool",
				AtSeconds: &at, AtBasis: "samples.jsonl: the service pool at its max"}}
		}
		return st
	}
	one := func(name string, good, bad int) capacity.Search {
		return capacity.Search{Name: name, Variant: name, Load: "users", Unit: "users", Outcome: capacity.Found, Capacity: good, FirstBad: bad,
			Resolution: "10%", Resolved: true, Limit: "pool exhausted", Resource: "the service's connection pool", LimitAtSeconds: &limitAt, Limits: []string{"pool not exhausted"},
			Stages: []capacity.Stage{stage(1, good/2, true, 120), stage(2, bad*2, false, 900), stage(3, bad, false, 400), stage(4, good, true, 150)}}
	}
	c := &capacity.Summary{Capacity: capacity.Capacity{Searches: []capacity.Search{one("commit-in-finally", 12, 13), one("fixed", 40, 44)}}}
	c.Capacity.Change = &capacity.Change{Before: "commit-in-finally", After: "fixed", From: 12, To: 40, Ratio: 3.3, Unit: "users",
		Line: "commit-in-finally → fixed raised capacity from 12 to 40 users, 3.3×"}
	return c
}

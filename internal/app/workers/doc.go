// Package workers plays one run's load as worker processes of leakbench
// on this machine (leakbench run --workers N|auto): each a process of the
// same binary (the hidden `leakbench worker`) with GOMAXPROCS=1, playing
// its slice of the plan as a shard does (plan.Segment), its results
// merged exactly as leakbench merge merges shards (package merge).
//
// Why processes: GOMAXPROCS cannot be set per group of goroutines, and
// most of the engine's CPU above the floor on two processors is the Go
// scheduler waking the second one (ENGINE-NOTES.md); one process also
// holds at most RLIMIT_NOFILE files, and one source address reaches one
// target port at most ip_local_port_range times. Before any load,
// NewLayout checks the plan's connections (a listen user has two) against
// both limits and says, with the numbers, what does not fit; a loopback
// target's connections are spread over several addresses of 127.0.0.0/8.
//
// A worker gets its spec (plan, tokens, slice, common start, source
// addresses) as one JSON line on its standard input, never on its command
// line; the end of that input is its stop. Its live figures are its own
// run directory's load.jsonl, which the parent sums into one progress
// line, and, with a metrics address, its live snapshot every second on
// descriptor 3, which the parent serves merged at one /metrics. A worker that dies fails the run and is named; the others are
// stopped and what they measured is merged, the record marked incomplete.
//
//	lay, err := workers.NewLayout(p, workers.Config{Auto: true}, target, limits)
//	res, rec, err := workers.Play(ctx, workers.Options{Command: workers.Self, Layout: lay, PlanJSON: raw, Target: target, Dir: dir})
package workers

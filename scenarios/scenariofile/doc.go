// Package scenariofile decodes scenario files — leakbench's YAML (or JSON)
// form of the scenario language — into plans ([plan.Plan]); package plan
// holds the language itself, its checks and its compiled form.
//
// [Load] reads a file (and the tokens its tokensFile names), [Parse] a
// document in memory; see scenarios/examples/annotated.yaml for every
// option, docs/reference/scenario.md for every key ([Keys] lists them
// from the parser's tables) and scenarios/FORMAT.md for the rules.
// Missing options get k6's defaults. Every key has one spelling; another
// (abort_after for abortAfter) is still read, with a warning naming the
// key to write (plan.Plan.Warnings). ${KEY} and ${KEY:-default} are
// filled from the command line's -e values and the environment
// ([LoadWith]); a missing one is an error naming its line. Every problem is reported at once, the file's and Compile's
// together, each naming the file, the line and what is wrong; the error
// is a *plan.Problems and matches plan.ErrInvalidPlan. A file may carry
// more top-level sections than the plan's own ([Section]): leakbench's
// profiles add stack, probe, signoff and faults, decoded in the same pass
// by the same rules.
//
// A hostile file is bounded: at most 1 MiB, 200,000 nodes once aliases
// are expanded, values nested at most plan.MaxNesting deep.
//
// Importing the package also lets plans be read back from their JSON
// (plan.Plan.UnmarshalJSON, registered with plan.RegisterDecoder), as run
// directories hold them.
//
//	p, err := scenariofile.Load("scenarios/examples/annotated.yaml")
//	if err != nil {
//		return err // e.g. "annotated.yaml:42: scenarios.agents.flow[1].choose[3].steps: empty; want at least one step"
//	}
//	fmt.Println(p.Describe()) // agents: constant-vus, 60 users for 20s; request timeout 5s
package scenariofile

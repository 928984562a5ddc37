package reports_test

import (
	"fmt"
	"log"

	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/plots"
)

// A recorded sign-off: the leaky gateway held sessions idle in transaction
// until PostgreSQL's timeout killed them; the fixed one released them.
func ExampleCompareRuns() {
	before, err := reports.LoadRun("testdata/signoff/before")
	if err != nil {
		log.Fatal(err)
	}
	after, err := reports.LoadRun("testdata/signoff/after")
	if err != nil {
		log.Fatal(err)
	}
	cmp := reports.CompareRuns(before, after)
	for _, c := range cmp.Checks {
		fmt.Println(c.Pass, c.Name)
	}
	fmt.Println("pass:", cmp.Pass)
	fmt.Println("plots:", plots.Names(before.PlotRun(), after.PlotRun()))
	// Output:
	// true before run completed
	// true after run completed
	// true before reproduces the leak
	// true after leaks no session
	// true after releases promptly
	// pass: true
	// plots: [stuck states release pgbouncer]
}

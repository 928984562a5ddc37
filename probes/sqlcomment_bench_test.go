package probes

import (
	"fmt"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// benchComment is a sqlcommenter comment with a traceparent of its own
// for connection i, as the reference gateway writes them.
func benchComment(i int) string {
	return fmt.Sprintf(" /*application='mcp-gateway',route='tools%%2Fcall',traceparent='00-%032x-%016x-01'*/", i+1, i+1)
}

// BenchmarkReadComment is the cost of reading one episode's comment (the
// probe reads each episode's once, when it begins): a new traceparent each
// time, the other values as a service repeats them.
func BenchmarkReadComment(b *testing.B) {
	var t tracker
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		ep := rundir.Episode{Query: stuckSQL + benchComment(i)}
		t.readComment(&ep)
		if ep.TraceID == "" {
			b.Fatal("no trace id")
		}
	}
}

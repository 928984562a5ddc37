package jsonl

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/rundir"
)

func TestRead(t *testing.T) {
	in := "{\"requests\":1}\n\n{\"requests\":2}\n{\"requests\":3,\"fail"
	var got []rundir.LoadPoint
	bad, err := Read(strings.NewReader(in), &got)
	if err != nil || bad != 1 || len(got) != 2 || got[1].Requests != 2 {
		t.Errorf("got %+v, %d bad, %v", got, bad, err)
	}
}

// TestEachLimit: Each stops after limit records that decode; a torn line
// does not count.
func TestEachLimit(t *testing.T) {
	in := "{\"requests\":1}\n{\"requests\":\n{\"requests\":2}\n{\"requests\":3}\n"
	var got []int64
	bad, err := Each(strings.NewReader(in), 2, func(p *rundir.LoadPoint) { got = append(got, p.Requests) })
	if err != nil || bad != 1 || len(got) != 2 || got[1] != 2 {
		t.Errorf("got %v, %d bad, %v", got, bad, err)
	}
}

package jsonl

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
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

// TestReadFile: every whole line read back, a last one without its
// newline left out; a whole line that does not decode is an error naming
// the file and the line.
func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "load.jsonl")
	if err := os.WriteFile(path, []byte("{\"requests\":1}\n\n{\"requests\":2}\n{\"requests\":3,\"fa"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile[rundir.LoadPoint](path)
	if err != nil || len(got) != 2 || got[1].Requests != 2 {
		t.Errorf("got %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{\"requests\":1}\n{\"requests\":2,\"fail\n{\"requests\":3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile[rundir.LoadPoint](path); err == nil || !strings.Contains(err.Error(), "load.jsonl:2:") {
		t.Errorf("torn line: %v, want an error naming line 2", err)
	}
}

// TestEachInOrderOnEveryCore: a whole file decoded on every core comes to
// fn in the file's order, one call at a time, every bad line counted —
// over many batches, on one core and on several.
func TestEachInOrderOnEveryCore(t *testing.T) {
	var b strings.Builder
	const n = 10_000
	wantBad := 0
	for i := range n {
		switch {
		case i%997 == 0:
			b.WriteString("{torn\n")
			wantBad++
		case i%501 == 0:
			b.WriteString("\n   \n") // blank lines are skipped, not bad
		}
		b.WriteString(`{"n":` + strconv.Itoa(i) + "}\n")
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		var got []int
		var inFn atomic.Int32
		bad, err := Each(strings.NewReader(b.String()), -1, func(v *struct{ N int }) {
			if inFn.Add(1) != 1 {
				t.Error("fn called on two goroutines at once")
			}
			got = append(got, v.N)
			inFn.Add(-1)
		})
		runtime.GOMAXPROCS(prev)
		if err != nil || bad != wantBad || len(got) != n {
			t.Fatalf("GOMAXPROCS %d: %d values, %d bad, %v; want %d, %d", procs, len(got), bad, err, n, wantBad)
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("GOMAXPROCS %d: value %d is %d: out of order", procs, i, v)
			}
		}
	}
}

package jsonl

import (
	"os"
	"path/filepath"
	"strings"
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

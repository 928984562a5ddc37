package scenariofile

import (
	"strings"
	"testing"
	"time"
)

type testFault struct {
	At    time.Duration `yaml:"at"`
	For   time.Duration `yaml:"for"`
	Link  string        `yaml:"link"`
	Count int           `yaml:"count"`
	Line  int           `yaml:"-"`
}

func (f *testFault) SetLine(l int) { f.Line = l }

// TestListSection: a section that is a list of mappings (faults) is read
// entry by entry by the Section rules; entries learn their lines; problems
// name key[i].field and the line.
func TestListSection(t *testing.T) {
	const scen = "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n"
	var fs []testFault
	_, err := Parse([]byte("faults:\n  - {at: 2s, for: 1s, link: db}\n  - at: 3s\n    count: 2\n"+scen), "p.yaml", Section{Key: "faults", Into: &fs})
	if err != nil {
		t.Fatal(err)
	}
	want := []testFault{{2 * time.Second, time.Second, "db", 0, 2}, {3 * time.Second, 0, "", 2, 3}}
	if len(fs) != 2 || fs[0] != want[0] || fs[1] != want[1] {
		t.Errorf("faults %+v, want %+v", fs, want)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"faults:\n  - {at: soon}\n" + scen, `p.yaml:2: faults[0].at: bad duration "soon"`},
		{"faults:\n  - {at: 1s}\n  - {link: db, tox: x}\n" + scen, `p.yaml:3: faults[1]: unknown option "tox"`},
		{"faults: {at: 1s}\n" + scen, `p.yaml:1: faults: want a list`},
		{"faults:\n  - 5\n" + scen, `p.yaml:2: faults[0]: want a mapping (key: value), got "5"`},
	} {
		var fs []testFault
		_, err := Parse([]byte(tt.yaml), "p.yaml", Section{Key: "faults", Into: &fs})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q:\n got %v\nwant %s…", tt.yaml, err, tt.want)
		}
	}
}

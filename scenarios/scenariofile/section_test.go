package scenariofile

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type testStack struct {
	Timeout  time.Duration `yaml:"idle_in_transaction_session_timeout"`
	MaxConns int           `yaml:"max_connections"`
	Mode     string        `yaml:"pool_mode"`
	Rate     float64       `yaml:"failure_rate"`
	Strict   bool          `yaml:"stateless"`
	Ports    []int         `yaml:"ports"`
}

// TestSections: extra top-level sections are read by the plan's rules and
// their problems reported with the plan's, by line.
func TestSections(t *testing.T) {
	const scen = "scenarios:\n  a: {executor: constant-vus, vus: 1, duration: 1s, flow: [ping]}\n"
	var st testStack
	_, err := Parse([]byte("stack:\n  idle_in_transaction_session_timeout: 5s\n  maxConnections: 100\n  pool-mode: transaction\n  failure_rate: 0.5\n  stateless: true\n"+scen),
		"p.yaml", Section{Key: "stack", Into: &st})
	if err != nil {
		t.Fatal(err)
	}
	if want := (testStack{5 * time.Second, 100, "transaction", 0.5, true, nil}); !reflect.DeepEqual(st, want) {
		t.Errorf("stack %+v, want %+v", st, want)
	}
	// Another type: yaml.v3's decoding, with the line.
	_, err = Parse([]byte("stack:\n  ports: 5\n"+scen), "p.yaml", Section{Key: "stack", Into: &st})
	if err == nil || err.Error() != "p.yaml:2: stack.ports: cannot unmarshal !!int `5` into []int" {
		t.Errorf("a list field given a number: %v", err)
	}
	if _, err = Parse([]byte("stack:\n  ports: [1, 2]\n"+scen), "p.yaml", Section{Key: "stack", Into: &st}); err != nil || len(st.Ports) != 2 {
		t.Errorf("a list field: %v %v", st.Ports, err)
	}
	st = testStack{MaxConns: 7}
	if _, err := Parse([]byte(scen), "p.yaml", Section{Key: "stack", Into: &st}); err != nil || st.MaxConns != 7 {
		t.Errorf("absent section: %+v, %v; want it left as it was", st, err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"stack:\n  max_conns: 5\n" + scen, `p.yaml:2: stack: unknown option "max_conns"; want one of idle_in_transaction_session_timeout, max_connections, pool_mode, failure_rate, stateless, ports`},
		{"stack:\n  idle_in_transaction_session_timeout: soon\n" + scen, `p.yaml:2: stack.idle_in_transaction_session_timeout: bad duration "soon"`},
		{"stack:\n  max_connections: many\n" + scen, `p.yaml:2: stack.max_connections: want a whole number, got "many"`},
		{"stack:\n  max_connections: [1]\n" + scen, "p.yaml:2: stack.max_connections: want a single value, got a list"},
		{"stack:\n  pool_mode: a\n  pool-mode: b\n" + scen, `p.yaml:3: stack: "pool-mode" given twice`},
		{"stack: 5\n" + scen, `p.yaml:1: stack: want a mapping (key: value), got "5"`},
		{"stack:\n  stateless: yes please\nscenarios:\n  a: {executor: sometimes, flow: [ping]}\n",
			"p.yaml:2: stack.stateless: want true or false, got \"yes please\"\np.yaml:4: scenarios.a.executor: unknown executor \"sometimes\""},
		{"stacks: {}\n" + scen, `p.yaml:1: unknown option "stacks"; want one of target, timeout, protocolVersion, headers, tokens, tokensFile, seed, connections, data, scenarios, thresholds, stack`},
	} {
		var st testStack
		_, err := Parse([]byte(tt.yaml), "p.yaml", Section{Key: "stack", Into: &st})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q:\n got %v\nwant %s…", tt.yaml, err, tt.want)
		}
	}
	// Aliases expanded inside a section count against the document's
	// bound, also where yaml.v3 decodes.
	bomb := "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nstack:\n  ports: [*e, *e, *e, *e]\n" + scen
	var big testStack
	if _, err := Parse([]byte(bomb), "p.yaml", Section{Key: "stack", Into: &big}); err == nil ||
		!strings.Contains(err.Error(), "stack.ports: document too large once aliases are expanded") || big.Ports != nil {
		t.Errorf("alias bomb in a section: %v (%d ports)", err, len(big.Ports))
	}
}

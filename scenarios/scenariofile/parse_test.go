package scenariofile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

func TestLoadAnnotatedExample(t *testing.T) {
	p, err := Load("../examples/annotated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) != 3 || p.Scenarios[0].Name != "agents" || p.Scenarios[1].Name != "waiters" || p.Scenarios[2].Name != "api" {
		t.Fatalf("scenarios %+v", p.Scenarios)
	}
	a, w := p.Scenarios[0], p.Scenarios[1]
	if a.Executor != plan.ExecRampingVUs || a.StartVUs != 0 || len(a.Stages) != 3 || a.GracefulRampDown.D() != 5*time.Second {
		t.Errorf("agents: %+v", a)
	}
	if w.Executor != plan.ExecConstantArrivalRate || w.Rate != 2 || w.MaxVUs != 80 || w.StartTime.D() != 10*time.Second {
		t.Errorf("waiters: %+v", w)
	}
	if len(p.Thresholds) != 11 || !p.Thresholds[10].AbortOnFail || p.Thresholds[10].DelayAbortEval.D() != 10*time.Second {
		t.Errorf("thresholds: %+v", p.Thresholds)
	}
	assertRoundTrip(t, p, "../examples/annotated.yaml")
}

// assertRoundTrip: a plan read from file, written as JSON, parses back to
// the same plan.
func assertRoundTrip(t *testing.T, p *plan.Plan, file string) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Parse(b, filepath.Join(filepath.Dir(file), "roundtrip.json")) // data files are beside it
	if err != nil {
		t.Fatalf("the plan's JSON does not parse back: %v\n%s", err, b)
	}
	b2, _ := json.Marshal(p2)
	if string(b) != string(b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
}

func TestParseDefaults(t *testing.T) {
	p, err := Parse([]byte(`
scenarios:
  a: {executor: constant-vus, duration: 1s, flow: [ping]}
  b: {executor: ramping-vus, stages: [{duration: 1s, target: 2}], flow: [ping]}
  c: {executor: per-vu-iterations, flow: [ping]}
  d: {executor: constant-arrival-rate, rate: 1, duration: 1s, preAllocatedVUs: 3, flow: [ping]}
  e: {executor: externally-controlled, vus: 5, duration: 1s, flow: [ping]}
  f: {executor: externally-controlled, maxVUs: 9, duration: 1s, flow: [ping]}
`), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios
	if p.Timeout.D() != mcp.DefaultRequestTimeout || s[0].VUs != 1 || s[0].GracefulStop.D() != 30*time.Second {
		t.Errorf("plan timeout %s, a %+v", p.Timeout, s[0])
	}
	if s[1].StartVUs != 1 || s[1].GracefulRampDown.D() != 30*time.Second {
		t.Errorf("b %+v", s[1])
	}
	if s[2].VUs != 1 || s[2].Iterations != 1 || s[2].MaxDuration.D() != 10*time.Minute {
		t.Errorf("c %+v", s[2])
	}
	if s[3].TimeUnit.D() != time.Second || s[3].MaxVUs != 3 {
		t.Errorf("d %+v", s[3])
	}
	// k6: maxVUs defaults to vus, vus to 1.
	if s[4].VUs != 5 || s[4].MaxVUs != 5 || s[5].VUs != 1 || s[5].MaxVUs != 9 {
		t.Errorf("e %+v, f %+v", s[4], s[5])
	}
}

// TestParseErrors: every problem names the file, the line and what is
// wrong.
func TestParseErrors(t *testing.T) {
	const head = "scenarios:\n  s:\n"
	tests := []struct {
		name, yaml string
		want       string // substring of the error, with file:line
	}{
		{"invalid yaml", "scenarios: [\n", "f.yaml:1: not valid YAML: did not find"},
		{"empty", "", "f.yaml: empty"},
		{"no scenarios", "target: http://127.0.0.1/mcp\n", "f.yaml:1: no scenarios"},
		{"unknown top-level", "targte: x\n" + head + "    executor: constant-vus\n", `f.yaml:1: unknown option "targte"`},
		{"unknown executor", head + "    executor: constant-vu\n    flow: [ping]\n", `f.yaml:3: scenarios.s.executor: unknown executor "constant-vu"`},
		{"no executor", head + "    vus: 1\n", "f.yaml:3: scenarios.s: no executor"},
		{"option of another executor", head + "    executor: constant-vus\n    duration: 1s\n    rate: 5\n    flow: [ping]\n", `f.yaml:5: scenarios.s: unknown option "rate"`},
		{"bad duration", head + "    executor: constant-vus\n    duration: 10\n    flow: [ping]\n", `f.yaml:4: scenarios.s.duration: bad duration "10" (a unit is needed`},
		{"duplicate key", head + "    executor: constant-vus\n    duration: 1s\n    duration: 2s\n    flow: [ping]\n", `f.yaml:5: scenarios.s: "duration" given twice`},
		{"unknown step", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - ping\n      - tools/cal: {name: x}\n", `f.yaml:7: scenarios.s.flow[1]: unknown step "tools/cal"`},
		{"step option typo", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - tools/call: {nmae: x}\n", `f.yaml:6: scenarios.s.flow[0].tools/call: unknown option "nmae"`},
		{"tool without name", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - tools/call: {arguments: {a: 1}}\n", `f.yaml:6: scenarios.s.flow[0].tools/call.name: missing`},
		{"stages all zero", head + "    executor: ramping-vus\n    stages: [{duration: 0s, target: 5}]\n    flow: [ping]\n", "f.yaml:4: scenarios.s.stages: every stage lasts 0s"},
		{"stages never a user", head + "    executor: ramping-vus\n    startVUs: 0\n    stages: [{duration: 5s, target: 0}]\n    flow: [ping]\n", "scenarios.s.stages: startVUs and every target are 0"},
		{"stage missing target", head + "    executor: ramping-vus\n    stages:\n      - {duration: 5s}\n    flow: [ping]\n", "f.yaml:5: scenarios.s.stages[0]: a stage needs both"},
		{"negative target", head + "    executor: ramping-vus\n    stages:\n      - {duration: 5s, target: -1}\n    flow: [ping]\n", "f.yaml:5: scenarios.s.stages[0].target: must be in [0,"},
		{"rate never positive", head + "    executor: ramping-arrival-rate\n    maxVUs: 1\n    stages: [{duration: 5s, target: 0}]\n    flow: [ping]\n", "startRate and every target are 0"},
		{"vus above maxVUs", head + "    executor: externally-controlled\n    vus: 5\n    maxVUs: 2\n    duration: 1s\n    flow: [ping]\n", "f.yaml:4: scenarios.s.vus: 5 is more than maxVUs (2)"},
		{"externally-controlled without duration", head + "    executor: externally-controlled\n    flow: [ping]\n", "scenarios.s.duration"},
		{"preallocated above max", head + "    executor: constant-arrival-rate\n    rate: 1\n    duration: 1s\n    preAllocatedVUs: 5\n    maxVUs: 2\n    flow: [ping]\n", "scenarios.s.preAllocatedVUs: 5 is more than maxVUs (2)"},
		{"abortAfter not shorter than timeout", head + "    executor: constant-vus\n    duration: 1s\n    timeout: 1s\n    flow:\n      - ping: {abortAfter: 2s}\n", "f.yaml:7: scenarios.s.flow[0].ping.abortAfter: 2s is not shorter than the request timeout (1s)"},
		{"spinning flow", head + "    executor: constant-vus\n    duration: 1s\n    flow: [endSession]\n", "users would spin"},
		{"bad probability", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - ping\n      - endSession: 2\n", "f.yaml:7: scenarios.s.flow[1].endSession.probability: must be in (0, 1]"},
		{"think without time", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping, think]\n", "scenarios.s.flow[1].think: needs a duration"},
		{"uniform inverted", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping, think: {uniform: [2s, 1s]}]\n", "max (1s) is less than min (2s)"},
		{"bad template", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - tools/call: {name: x, arguments: {a: \"{{usr}}\"}}\n", `f.yaml:6: scenarios.s.flow[0].tools/call.arguments: a: template "{{usr}}": unknown placeholder {{usr}}`},
		{"unclosed template", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - resources/read: \"file:///{{user\"\n", "is not closed"},
		{"prompt argument not scalar", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - prompts/get: {name: p, arguments: {a: [1]}}\n", "prompt arguments must be strings"},
		{"choose empty", head + "    executor: constant-vus\n    duration: 1s\n    flow:\n      - ping\n      - choose: [{weight: 2, steps: []}]\n", "f.yaml:7: scenarios.s.flow[1].choose[0].steps: empty"},
		{"bad threshold expression", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_req_duration: [\"p95<500\"]\n", `f.yaml:7: thresholds.mcp_req_duration: threshold "p95<500": unknown aggregation "p95"`},
		{"threshold no comparison", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_req_failed: [\"rate 0.01\"]\n", "has no comparison"},
		{"unknown metric", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  https_req_duration: [\"p(95)<500\"]\n", `unknown metric "https_req_duration"`},
		{"unknown tag", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_req_duration{status:200}: [\"p(95)<500\"]\n", `has no tag "status"`},
		{"unknown method value", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_req_duration{method:tools/cal}: [\"p(95)<500\"]\n", `unknown method "tools/cal"`},
		{"unknown scenario value", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  iterations{scenario:x}: [\"count>1\"]\n", `no scenario named "x"`},
		{"aggregation of another type", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_req_duration: [\"rate<0.1\"]\n", "rate is not an aggregation of this metric"},
		{"abortOnFail not bool", head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\nthresholds:\n  mcp_reqs: [{threshold: \"count>1\", abortOnFail: yes please}]\n", "f.yaml:7: thresholds.mcp_reqs.abortOnFail: want true or false"},
		{"authorization header", "headers: {Authorization: Bearer x}\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", "headers.Authorization: bearer tokens go in tokens"},
		{"tokens and file", "tokens: [a]\ntokensFile: t.txt\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", "give tokens or tokensFile, not both"},
		{"pinned unknown version", "protocolVersion: 2024-11-05\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", `protocolVersion: "2024-11-05" is not a version this client speaks`},
		{"too many users", head + "    executor: constant-vus\n    vus: 1000001\n    duration: 1s\n    flow: [ping]\n", "scenarios.s.vus: must be in [1, 1000000]"},
		// A range error names the option's own line, not the scenario's.
		{"range error on its line", head + "    executor: constant-vus\n    duration: 1s\n    vus: 0\n    flow: [ping]\n", "f.yaml:5: scenarios.s.vus: must be in [1, 1000000]"},
		{"anchor on an unknown key", "x: &a {duration: 1s}\n", `unknown option "x"`},
		{"merge key", head + "    executor: constant-vus\n    duration: 1s\n    <<: {vus: 2}\n    flow: [ping]\n", "f.yaml:5: scenarios.s: YAML merge keys (<<) are not supported"},
		{"plan timeout out of range", "timeout: 2h\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", "f.yaml:1: timeout: must be in (0, 10m0s]"},
		{"token with a no-break space", "tokens: [\"a\\u00a0b\"]\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", "f.yaml:1: tokens: token 1 contains whitespace"},
		{"alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" + head + "    executor: constant-vus\n    duration: 1s\n    flow: [ping]\n", `unknown option "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.yaml), "f.yaml")
			if err == nil {
				t.Fatalf("no error; plan %+v", p)
			}
			if !errors.Is(err, plan.ErrInvalidPlan) {
				t.Errorf("error does not match ErrInvalidPlan: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tt.want)
			}
			seen := map[string]bool{}
			for _, l := range strings.Split(err.Error(), "\n") {
				if seen[l] {
					t.Errorf("problem reported twice: %s", l)
				}
				seen[l] = true
			}
		})
	}
}

// TestAliasesBounded: YAML aliases are followed, but a document that
// expands beyond the node budget is refused instead of eating memory.
func TestAliasesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 8; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("scenarios:\n  s:\n    executor: constant-vus\n    duration: 1s\n    flow:\n      - tools/call: {name: x, arguments: {big: *a7}}\n")
	start := time.Now()
	_, err := Parse([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "too large once aliases are expanded") {
		t.Fatalf("error %v, want the alias budget to stop it", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestLoadTokens(t *testing.T) {
	dir := t.TempDir()
	scen := "tokensFile: toks.txt\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("s.yaml", scen)
	write("toks.txt", "# tokens\nsecret-one\n\n  secret-two  \n")
	p, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tokens) != 2 || p.Tokens[0] != "secret-one" || p.Tokens[1] != "secret-two" {
		t.Fatalf("tokens %q", p.Tokens)
	}
	b, _ := json.Marshal(p)
	if strings.Contains(string(b), "secret") {
		t.Errorf("plan JSON carries tokens: %s", b)
	}

	write("toks.txt", "good\nbad token with spaces-secret\n")
	_, err = Load(filepath.Join(dir, "s.yaml"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:1: tokensFile:") || !strings.Contains(err.Error(), "toks.txt:2") {
		t.Errorf("bad token file: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("error quotes a token: %v", err)
	}
	// A space only Unicode calls one is found in the token file too.
	write("toks.txt", "good\nno\u00a0break-secret\n")
	if _, err = Load(filepath.Join(dir, "s.yaml")); err == nil || !strings.Contains(err.Error(), "toks.txt:2") || strings.Contains(err.Error(), "secret") {
		t.Errorf("token with a no-break space: %v", err)
	}
	write("s.yaml", strings.Replace(scen, "toks.txt", "missing.txt", 1))
	if _, err := Load(filepath.Join(dir, "s.yaml")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing token file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml")); err == nil || !strings.Contains(err.Error(), "read scenario file") {
		t.Errorf("missing scenario file: %v", err)
	}
}

// TestSpellings: k6's camelCase, snake_case and kebab-case name the same
// option; xk6-mcp's method names name the same steps.
func TestSpellings(t *testing.T) {
	p, err := Parse([]byte(`
scenarios:
  s:
    executor: constant-arrival-rate
    rate: 1
    time_unit: 2s
    duration: 1s
    pre-allocated-vus: 1
    max_vus: 2
    flow:
      - callTool: {name: x, abort_after: 1s}
      - listAllTools
      - readResource: file:///x
      - getPrompt: p
`), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios[0]
	if s.TimeUnit.D() != 2*time.Second || s.PreAllocatedVUs != 1 || s.MaxVUs != 2 {
		t.Errorf("%+v", s)
	}
	kinds := []string{}
	for _, st := range s.Flow {
		kinds = append(kinds, st.Kind)
	}
	if strings.Join(kinds, " ") != "tools/call tools/list resources/read prompts/get" || s.Flow[0].AbortAfter.D() != time.Second {
		t.Errorf("flow %+v", s.Flow)
	}
}

// FuzzParse: the decoder never panics, never accepts a plan its own
// checks reject, and what it accepts survives a JSON round trip.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../examples/annotated.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("scenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"))
	f.Add([]byte("scenarios:\n  r:\n    executor: ramping-arrival-rate\n    maxVUs: 2\n    stages: [{duration: 1s, target: 3}]\n    flow:\n      - choose: [{weight: 2, steps: [{tools/call: {name: \"{{pick a b}}\", arguments: {x: {$pick: [1, \"{{user}}\"]}}}}]}]\nthresholds:\n  mcp_req_failed{kind:timeout}: [\"rate<0.1\"]\n"))
	f.Add([]byte("a: &a [1]\nb: [*a, *a]\n"))
	f.Add([]byte("stack:\n  max_connections: 5\n  ports: [1, 2]\n  idle-in-transaction-session-timeout: 1s\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st testStack // profiles' sections are read on the same path
		p, err := Parse(data, "fuzz.yaml", Section{Key: "stack", Into: &st})
		if err != nil {
			if !errors.Is(err, plan.ErrInvalidPlan) {
				t.Fatalf("error does not match ErrInvalidPlan: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed plan fails validation: %v", err)
		}
		assertRoundTrip(t, p, "fuzz.yaml")
	})
}

package scenariofile

import (
	"errors"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan"
)

func TestParseVar(t *testing.T) {
	tests := []struct {
		arg, key, value, err string
	}{
		{arg: "VUS=10", key: "VUS", value: "10"},
		{arg: "TOKEN=a=b", key: "TOKEN", value: "a=b"},
		{arg: "EMPTY=", key: "EMPTY", value: ""},
		{arg: "VUS", err: `bad -e value: "VUS" has no '='; want KEY=VALUE`},
		{arg: "=x", err: `bad -e value: "" is not a variable name`},
		{arg: "1X=2", err: `bad -e value: "1X" is not a variable name`},
		{arg: "A-B=secret", err: `bad -e value: "A-B" is not a variable name`},
	}
	for _, tt := range tests {
		k, v, err := ParseVar(tt.arg)
		if tt.err != "" {
			if !errors.Is(err, ErrBadVar) || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("ParseVar(%q) error %v; want one starting %q", tt.arg, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseVar(%q) error quotes the value: %v", tt.arg, err)
			}
			continue
		}
		if err != nil || k != tt.key || v != tt.value {
			t.Errorf("ParseVar(%q) = %q, %q, %v; want %q, %q", tt.arg, k, v, err, tt.key, tt.value)
		}
	}
	vars, err := ParseVars([]string{"A=1", "B=2", "A=3"})
	if err != nil || vars["A"] != "3" || vars["B"] != "2" {
		t.Errorf("ParseVars = %v, %v; want the last A", vars, err)
	}
	if _, err := ParseVars([]string{"A=1", "B"}); !errors.Is(err, ErrBadVar) {
		t.Errorf("ParseVars with a bad value: %v", err)
	}
}

// TestInterpolation: ${KEY} takes -e's value, then the environment's, then
// its default; a plain scalar is typed by its new text (vus a number), a
// quoted one stays a string; $${ is a literal ${.
func TestInterpolation(t *testing.T) {
	const file = `target: ${TARGET:-http://127.0.0.1:1/mcp}
headers:
  X-Team: "${TEAM}"
scenarios:
  ${NAME:-s}:
    executor: constant-vus
    vus: ${VUS:-3}
    duration: ${DURATION:-1s}
    flow:
      - tools/call:
          name: echo
          arguments:
            text: "cost $${HOME} for ${TEAM}, ${{randInt 1 9}}"
            n: ${N:-7}
`
	env := map[string]string{"TEAM": "env-team", "VUS": "9"}
	o := Options{Vars: map[string]string{"TEAM": "cli-team", "DURATION": "2s"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	p, err := ParseWith([]byte(file), "i.yaml", o)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios[0]
	if p.Target != "http://127.0.0.1:1/mcp" || p.Headers["X-Team"] != "cli-team" || s.Name != "s" || s.VUs != 9 || s.Duration.String() != "2s" {
		t.Errorf("plan: target %q, X-Team %q, scenario %q, vus %d, duration %s", p.Target, p.Headers["X-Team"], s.Name, s.VUs, s.Duration)
	}
	args := s.Flow[0].Arguments
	if args["text"] != "cost ${HOME} for cli-team, ${{randInt 1 9}}" || args["n"] != int64(7) {
		t.Errorf("arguments %#v; want $${ literal, -e's TEAM, ${{ a dollar before a template, n the number 7", args)
	}
	// Without -e or the environment, the defaults.
	p, err = ParseWith([]byte(strings.ReplaceAll(file, "${TEAM}", "${TEAM:-red}")), "i.yaml", Options{LookupEnv: NoEnv})
	if err != nil {
		t.Fatal(err)
	}
	if p.Scenarios[0].VUs != 3 || p.Headers["X-Team"] != "red" {
		t.Errorf("defaults: vus %d, X-Team %q", p.Scenarios[0].VUs, p.Headers["X-Team"])
	}
}

// TestInterpolationErrors: each problem names the file and the line.
func TestInterpolationErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"missing", "scenarios:\n  s:\n    executor: constant-vus\n    vus: ${USERS}\n    duration: 1s\n    flow: [tools/list]\n",
			"m.yaml:4: ${USERS} is not set: give -e USERS=VALUE, set USERS in the environment, or write ${USERS:-default}"},
		{"two defaults", "target: ${T:-http://a/mcp}\nscenarios:\n  s:\n    executor: constant-vus\n    duration: 1s\n    flow: [tools/list]\nheaders: {X: \"${T:-http://b/mcp}\"}\n",
			`m.yaml:7: ${T} has two defaults: "http://b/mcp" here and "http://a/mcp" on line 1; give it one`},
		{"unclosed", "target: ${T\nscenarios: {}\n", "m.yaml:1: \"${T\": ${ is not closed by }"},
		{"bad name", "target: ${1T}\nscenarios: {}\n", "m.yaml:1: ${1T}: want ${NAME} or ${NAME:-default}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWith([]byte(tt.yaml), "m.yaml", Options{LookupEnv: NoEnv})
			if !errors.Is(err, plan.ErrInvalidPlan) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
	// A recorded plan is read as written.
	if _, err := ReadRecorded([]byte(`{"scenarios":{"s":{"executor":"constant-vus","duration":"1s","flow":[{"tools/call":{"name":"echo","arguments":{"text":"${X}"}}}]}}}`)); err != nil {
		t.Errorf("ReadRecorded interpolated: %v", err)
	}
}

package scenariofile_test

import (
	"fmt"

	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// Parse reads a scenario file; missing options get k6's defaults.
func ExampleParse() {
	p, err := scenariofile.Parse([]byte(`
scenarios:
  agents:
    executor: ramping-vus
    stages: [{duration: 10s, target: 50}, {duration: 20s, target: 50}]
    flow:
      - think: {uniform: [200ms, 1s]}
      - tools/call: {name: echo, arguments: {text: "user {{user}}"}}
thresholds:
  mcp_req_duration{method:tools/call}: ["p(95)<500"]
`), "agents.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := p.Scenarios[0]
	fmt.Println(s.Name, s.Executor, "startVUs", s.StartVUs, "gracefulStop", s.GracefulStop)
	fmt.Println(p.Thresholds[0].Metric, p.Thresholds[0].Expression)
	// Output:
	// agents ramping-vus startVUs 1 gracefulStop 30s
	// mcp_req_duration{method:tools/call} p(95)<500
}

// Errors name the file, the line and what is wrong.
func ExampleParse_errors() {
	_, err := scenariofile.Parse([]byte(`
scenarios:
  agents:
    executor: constant-vus
    duration: 30
    flow:
      - tools/cal: {name: echo}
thresholds:
  mcp_req_duration: ["p95<500"]
`), "agents.yaml")
	fmt.Println(err)
	// Output:
	// agents.yaml:5: scenarios.agents.duration: bad duration "30" (a unit is needed, e.g. "30s" or "500ms")
	// agents.yaml:7: scenarios.agents.flow[0]: unknown step "tools/cal"; want one of initialize, ping, tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get, server/discover, think, endSession, choose, http
	// agents.yaml:9: thresholds.mcp_req_duration: threshold "p95<500": unknown aggregation "p95"; want avg, min, med, max, p(N), rate, count or value
}

func ExampleParseVar() {
	for _, arg := range []string{"VUS=10", "VUS"} {
		k, v, err := scenariofile.ParseVar(arg)
		fmt.Println(k, v, err)
	}
	// Output:
	// VUS 10 <nil>
	//   bad -e value: "VUS" has no '='; want KEY=VALUE
}

func ExampleParseWith() {
	file := []byte("scenarios:\n  s:\n    executor: constant-vus\n    vus: ${VUS:-2}\n    duration: ${DURATION}\n    flow: [tools/list]\n")
	p, err := scenariofile.ParseWith(file, "s.yaml", scenariofile.Options{Vars: map[string]string{"DURATION": "5s"}, LookupEnv: scenariofile.NoEnv})
	fmt.Println(p.Describe(), err)
	_, err = scenariofile.ParseWith(file, "s.yaml", scenariofile.Options{LookupEnv: scenariofile.NoEnv})
	fmt.Println(err)
	// Output:
	// s: constant-vus, 2 users for 5s; request timeout 10s <nil>
	// s.yaml:5: ${DURATION} is not set: give -e DURATION=VALUE, set DURATION in the environment, or write ${DURATION:-default}
}

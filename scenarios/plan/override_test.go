package plan_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

const twoScenarios = `scenarios:
  ramp:
    executor: ramping-vus
    stages: [{duration: 10s, target: 8}, {duration: 20s, target: 4}]
    flow: [tools/list]
  api:
    executor: constant-arrival-rate
    rate: 5
    duration: 40s
    preAllocatedVUs: 2
    maxVUs: 6
    startTime: 5s
    flow: [ping]
thresholds:
  mcp_req_failed: ["rate<0.01"]
  mcp_req_failed{scenario:api}: ["rate<0.05"]
  mcp_req_duration{scenario:ramp}: ["p(95)<500"]
`

// TestOverride: k6's shortcuts on a parsed plan. The scenario keeps its
// flow; its executor becomes constant-vus (users, duration) or
// per-vu-iterations (iterations), what the command line leaves out taken
// from the scenario.
func TestOverride(t *testing.T) {
	tests := []struct {
		name string
		o    plan.Overrides
		want func(s plan.Scenario) bool
		desc string
	}{
		{"vus on a ramp", plan.Overrides{Scenario: "ramp", VUs: 3},
			func(s plan.Scenario) bool {
				return s.Executor == plan.ExecConstantVUs && s.VUs == 3 && s.Duration.D() == 30*time.Second
			}, "constant-vus, 3 users for the stages' 30s"},
		{"duration on a ramp", plan.Overrides{Scenario: "ramp", Duration: 5 * time.Second},
			func(s plan.Scenario) bool {
				return s.Executor == plan.ExecConstantVUs && s.VUs == 8 && s.Duration.D() == 5*time.Second
			}, "constant-vus, the ramp's highest target (8) for 5s"},
		{"iterations on an arrival rate", plan.Overrides{Scenario: "api", Iterations: 4, VUs: 2},
			func(s plan.Scenario) bool {
				return s.Executor == plan.ExecPerVUIterations && s.VUs == 2 && s.Iterations == 4 && s.MaxDuration.D() == 10*time.Minute && s.StartTime == 0
			}, "per-vu-iterations, 2 users × 4, maxDuration k6's 10m, starting at once"},
		{"iterations and duration", plan.Overrides{Scenario: "api", Iterations: 4, Duration: 3 * time.Second},
			func(s plan.Scenario) bool {
				return s.Executor == plan.ExecPerVUIterations && s.VUs == 6 && s.MaxDuration.D() == 3*time.Second
			}, "per-vu-iterations, maxVUs' 6 users, maxDuration 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := scenariofile.Parse([]byte(twoScenarios), "o.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Override(tt.o); err != nil {
				t.Fatal(err)
			}
			if len(p.Scenarios) != 1 || p.Scenarios[0].Name != tt.o.Scenario || !tt.want(p.Scenarios[0]) {
				t.Fatalf("scenarios %+v; want only %s: %s", p.Scenarios, tt.o.Scenario, tt.desc)
			}
			if len(p.Scenarios[0].Flow) != 1 {
				t.Errorf("flow %+v: lost", p.Scenarios[0].Flow)
			}
			for _, th := range p.Thresholds {
				if strings.Contains(th.Metric, "scenario:") && !strings.Contains(th.Metric, "scenario:"+tt.o.Scenario) {
					t.Errorf("threshold %s names a scenario no longer run", th.Metric)
				}
			}
			if len(p.Thresholds) != 2 {
				t.Errorf("thresholds %+v; want the untagged one and the selected scenario's", p.Thresholds)
			}
			if _, err := plan.Compile(p); err != nil {
				t.Errorf("the overridden plan does not compile: %v", err)
			}
		})
	}
}

func TestOverrideErrors(t *testing.T) {
	tests := []struct {
		name string
		o    plan.Overrides
		want string
	}{
		{"several scenarios", plan.Overrides{VUs: 2},
			"cannot override the scenario: o.yaml has 2 scenarios (ramp, api); name the one to override with --scenario-name"},
		{"unknown name", plan.Overrides{Scenario: "nope", VUs: 2},
			`cannot override the scenario: no scenario "nope" in o.yaml; it has ramp, api`},
		{"too many users", plan.Overrides{Scenario: "ramp", VUs: plan.MaxUsers + 1}, "--vus 1000001: want 1 to 1000000 users"},
		{"negative duration", plan.Overrides{Scenario: "ramp", Duration: -time.Second}, "--duration -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := scenariofile.Parse([]byte(twoScenarios), "o.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = p.Override(tt.o)
			if !errors.Is(err, plan.ErrOverride) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want ErrOverride containing %q", err, tt.want)
			}
			if len(p.Scenarios) != 2 || p.Scenarios[0].Executor != plan.ExecRampingVUs {
				t.Errorf("a failed override changed the plan: %+v", p.Scenarios)
			}
		})
	}
	// One scenario needs no name; no override changes nothing.
	p, err := scenariofile.Parse([]byte("scenarios:\n  only: {executor: constant-vus, vus: 2, duration: 1s, flow: [ping]}\n"), "one.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Override(plan.Overrides{}); err != nil || p.Scenarios[0].VUs != 2 {
		t.Errorf("zero overrides: %v, %+v", err, p.Scenarios[0])
	}
	if err := p.Override(plan.Overrides{VUs: 5}); err != nil || p.Scenarios[0].VUs != 5 || p.Scenarios[0].Duration.D() != time.Second {
		t.Errorf("--vus 5 on the only scenario: %v, %+v", err, p.Scenarios[0])
	}
}

// TestDataPerValidation: per: is user or iteration, and unique rows are
// a user's for its life.
func TestDataPerValidation(t *testing.T) {
	dir := t.TempDir()
	yaml := "data: {file: %s/u.csv, mode: MODE, per: PER}\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"
	for _, tt := range []struct{ mode, per, want string }{
		{"random", "iteration", ""},
		{"sequential", "user", ""},
		{"unique", "iteration", "data.per: unique gives each user its own row for its life"},
		{"random", "request", `data.per: unknown "request"; want user`},
	} {
		src := strings.NewReplacer("%s", dir, "MODE", tt.mode, "PER", tt.per).Replace(yaml)
		writeFile(t, dir+"/u.csv", "a\n1\n2\n")
		_, err := scenariofile.Parse([]byte(src), dir+"/d.yaml")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s/%s: %v", tt.mode, tt.per, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s/%s: error %v; want %q", tt.mode, tt.per, err, tt.want)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ExamplePlan_Override() {
	p, err := scenariofile.Parse([]byte(twoScenarios), "o.yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Override(plan.Overrides{VUs: 3}))
	if err := p.Override(plan.Overrides{Scenario: "ramp", VUs: 3, Duration: 5 * time.Second}); err != nil {
		panic(err)
	}
	fmt.Println(p.Describe())
	// Output:
	// cannot override the scenario: o.yaml has 2 scenarios (ramp, api); name the one to override with --scenario-name
	// ramp: constant-vus, 3 users for 5s; request timeout 10s
}

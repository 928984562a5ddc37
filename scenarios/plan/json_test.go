package plan_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestPlanJSONRoundTrip: a plan written into summary.json reads back to
// the same plan, so `leakbench report` can re-read any run directory.
func TestPlanJSONRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../examples/annotated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := scenariofile.Parse(data, "../examples/annotated.yaml") // its data file is beside it
	if err != nil {
		t.Fatalf("parse the annotated example: %v", err)
	}
	first, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back plan.Plan
	if err := json.Unmarshal(first, &back); err != nil {
		t.Fatalf("read the plan back: %v\n%s", err, first)
	}
	second, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Fatalf("plan changed in a JSON round trip:\n%s\n%s", first, second)
	}
	if err := json.Unmarshal([]byte(`{"scenarios": 3}`), &back); err == nil {
		t.Fatal("a malformed plan was accepted")
	}
}

// TestPlanJSONRedactsHeaders: secret-looking header values never leave.
func TestPlanJSONRedactsHeaders(t *testing.T) {
	p, err := scenariofile.Parse([]byte("headers: {X-Api-Key: k-123, X-Tenant: t1}\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"), "h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	if strings.Contains(string(b), "k-123") || !strings.Contains(string(b), `"X-Tenant":"t1"`) {
		t.Errorf("headers in JSON: %s", b)
	}
}

package plan

import (
	"encoding/json"
	"os"
	"testing"
)

// TestPlanJSONRoundTrip: a plan written into summary.json reads back to
// the same plan, so `leakbench report` can re-read any run directory.
func TestPlanJSONRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../examples/annotated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePlan(data, "../examples/annotated.yaml") // its data file is beside it
	if err != nil {
		t.Fatalf("parse the annotated example: %v", err)
	}
	first, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
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

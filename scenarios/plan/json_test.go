package plan_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestPlanJSONRoundTrip: a plan written into summary.json reads back to
// the same plan, so `leakbench report` can re-read any run directory.
// (A field the encoder drops is dropped both times: TestPlanJSONKeepsFields
// catches that.)
func TestPlanJSONRoundTrip(t *testing.T) {
	p := annotated(t)
	first, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenariofile.ReadRecorded(first)
	if err != nil {
		t.Fatalf("read the plan back: %v\n%s", err, first)
	}
	second, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Fatalf("plan changed in a JSON round trip:\n%s\n%s", first, second)
	}
	if _, err := scenariofile.ReadRecorded([]byte(`{"scenarios": 3}`)); err == nil {
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

// TestPlanJSONRedactsTarget: the target's secret query
// parameters never reach a run directory; the rest of it does (#26).
func TestPlanJSONRedactsTarget(t *testing.T) {
	p, err := scenariofile.Parse([]byte("target: 'http://127.0.0.1:8080/mcp?api_key=k-123&team=red'\nscenarios:\n  s: {executor: constant-vus, duration: 1s, flow: [ping]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	if strings.Contains(string(b), "k-123") || !strings.Contains(string(b), "team=red") {
		t.Errorf("target in JSON: %s", b)
	}
}

// TestPlanJSONKeepsFields catches what a round trip cannot: a field the
// encoder drops is dropped both times, and the two encodings agree. So
// the plan parsed from the annotated example is compared with the plan
// read back from its JSON, field by exported field, and every field the
// example sets must come back with its value — but for what the JSON
// hides on purpose (tokens, secret-looking header values).
func TestPlanJSONKeepsFields(t *testing.T) {
	// A secret header, set here so that the redaction is checked too:
	// the annotated example has none.
	parsed := annotated(t)
	parsed.Headers["X-Api-Key"] = "s3cret"
	if parsed.Headers["X-Load-Test"] == "" {
		t.Fatal("the annotated example's X-Load-Test header is gone: the header check below needs a header that is not secret")
	}
	parsed.Tokens = []string{"tok-1"}
	b, err := json.Marshal(parsed)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenariofile.ReadRecorded(b)
	if err != nil {
		t.Fatalf("read the plan back: %v\n%s", err, b)
	}
	var d differ
	d.walk("Plan", reflect.ValueOf(parsed).Elem(), reflect.ValueOf(back).Elem())
	for _, p := range d.changed {
		t.Errorf("%s: lost or changed in the plan's JSON", p)
	}
	// Each redaction must have happened: the hidden value is not in the
	// JSON and the redacted field reads back as such.
	if strings.Contains(string(b), "s3cret") || back.Headers["X-Api-Key"] != redact.Mask {
		t.Errorf("secret header: %q read back, JSON %s", back.Headers["X-Api-Key"], b)
	}
	if strings.Contains(string(b), "tok-1") || back.Tokens != nil {
		t.Errorf("tokens: %q read back, JSON %s", back.Tokens, b)
	}
	// The check only sees what the example sets: a field it never sets
	// would be dropped unseen. Fields of the plan's types that no part of
	// the example sets are listed here, each with why.
	unset := map[string]string{
		"Plan.TokensFile":        "a tokens file would be read when parsing the example",
		"Plan.Tokens":            "tokens are never written (redacted above)",
		"Plan.SharedConnections": "the example shows the default, perUser",
		"Scenario.Iterations":    "no per-vu-iterations scenario in the example",
		"Scenario.MaxDuration":   "no per-vu-iterations scenario in the example",
		"Scenario.StartRate":     "no ramping-arrival-rate scenario in the example",
		"Scenario.StartVUs":      "the example gives startVUs: 0, the zero value",
		"Scenario.Timeout":       "the example's scenarios keep the plan's timeout (its steps set their own)",
	}
	var missing []string
	for _, f := range d.never() {
		if _, ok := unset[f]; !ok {
			missing = append(missing, f)
		}
	}
	for f := range unset {
		if d.seen[f] {
			t.Errorf("%s is listed as unset, but the example sets it: take it off the list", f)
		}
		if !d.all[f] && !dropped[f] {
			t.Errorf("%s is listed as unset, but the plan has no such field", f)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the annotated example sets none of %s: this test cannot see them dropped; set them in the example or list them in unset with why", missing)
	}
}

func annotated(t *testing.T) *plan.Plan {
	t.Helper()
	data, err := os.ReadFile("../examples/annotated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := scenariofile.Parse(data, "../examples/annotated.yaml") // its data file is beside it
	if err != nil {
		t.Fatalf("parse the annotated example: %v", err)
	}
	return p
}

// differ compares two plans field by exported field.
type differ struct {
	changed []string        // value paths, "Plan.Scenarios[agents].Flow[1]..."
	seen    map[string]bool // type-level field paths ("Step.Name"): set somewhere
	all     map[string]bool // every type-level field path walked
}

// What the plan's JSON changes by design: tokens are never written (the
// test checks that on its own), secret-looking header values are
// masked, and an http step's method is written with its default.
var (
	dropped  = map[string]bool{"Plan.Tokens": true}
	headers  = map[string]bool{"Plan.Headers": true, "HTTPRequest.Headers": true}
	defaults = map[string][2]any{"HTTPRequest.Method": {"", "GET"}}
)

func (d *differ) walk(path string, a, b reflect.Value) {
	d.walkType(path, "", a, b)
}

// walkType walks a and b, path naming the value and field the type-level
// field ("Step.Name") that holds it.
func (d *differ) walkType(path, field string, a, b reflect.Value) {
	if d.seen == nil {
		d.seen, d.all = map[string]bool{}, map[string]bool{}
	}
	if field != "" {
		d.all[field] = true
		if !a.IsZero() {
			d.seen[field] = true
		}
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				d.changed = append(d.changed, path)
			}
			return
		}
		if a.Kind() == reflect.Pointer && a.Elem().Kind() == reflect.Struct {
			d.walkType(path, field, a.Elem(), b.Elem())
			return
		}
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := t.Name() + "." + f.Name
			if field != "" && !isTopLevel(t) {
				name = field + "." + f.Name
			}
			fa, fb := a.Field(i), b.Field(i)
			switch {
			case dropped[name]:
				continue
			case headers[name]:
				d.headers(path+"."+f.Name, name, fa, fb)
				continue
			}
			if dv, ok := defaults[name]; ok && dv == [2]any{fa.Interface(), fb.Interface()} {
				continue
			}
			d.walkType(path+"."+f.Name, name, fa, fb)
		}
		return
	case reflect.Slice:
		if a.Len() != b.Len() {
			d.changed = append(d.changed, fmt.Sprintf("%s (%d elements, %d read back)", path, a.Len(), b.Len()))
			return
		}
		if isTopLevel(a.Type().Elem()) {
			for i := range a.Len() {
				d.walkType(fmt.Sprintf("%s[%d]", path, i), "", a.Index(i), b.Index(i))
			}
			return
		}
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		d.changed = append(d.changed, fmt.Sprintf("%s: %v, read back %v", path, a.Interface(), b.Interface()))
	}
}

// headers compares header maps: every header comes back, with its value
// or masked.
func (d *differ) headers(path, field string, a, b reflect.Value) {
	d.all[field] = true
	if a.Len() > 0 {
		d.seen[field] = true
	}
	ha, hb := a.Interface().(map[string]string), b.Interface().(map[string]string)
	if len(ha) != len(hb) {
		d.changed = append(d.changed, fmt.Sprintf("%s: %v, read back %v", path, ha, hb))
		return
	}
	for k, v := range ha {
		if w, ok := hb[k]; !ok || (w != v && w != redact.Mask) {
			d.changed = append(d.changed, fmt.Sprintf("%s[%s]: %q, read back %q", path, k, v, w))
		}
	}
}

// isTopLevel: the plan's own structs, whose fields are named by their
// type ("Step.Name") wherever they nest; other structs (Think, a task)
// are named by the field that holds them ("Step.Think.Min").
func isTopLevel(t reflect.Type) bool {
	return slices.Contains([]string{"Plan", "Scenario", "Step", "Stage", "Choice", "Threshold", "HTTPRequest", "DataSource", "Check", "Capture"}, t.Name())
}

// never lists the type-level fields walked that no value set, sorted.
func (d *differ) never() []string {
	var out []string
	for f := range d.all {
		if !d.seen[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

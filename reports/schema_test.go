package reports

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestSchemaDocumented keeps SCHEMA.md honest: every field summary.json and
// compare.json can hold must be listed there, by its JSON path. A field
// added to rundir.Summary, rundir.ProbeSummary or rundir.LoadResult fails this test
// until it is documented with its unit.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range undocumented(string(doc), rundir.Summary{}, Comparison{}) {
		t.Errorf("SCHEMA.md does not document `%s`", p)
	}
}

// TestUndocumented checks the check itself on a synthetic struct: were
// undocumented to miss a field (a tag it misreads, a nesting it does not
// walk), TestSchemaDocumented would pass with SCHEMA.md out of date.
func TestUndocumented(t *testing.T) {
	type leaf struct {
		P95 float64 `json:"p95_ms"`
	}
	type root struct {
		Name    string          `json:"name"`
		Steps   []leaf          `json:"steps"`
		Latency map[string]leaf `json:"latency"`
		Secret  string          `json:"-"`
		Plain   int
		hidden  int
	}
	_ = root{}.hidden
	const full = "`name` `steps[].p95_ms` `latency.*.p95_ms` `Plain`"
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"all documented", full, nil},
		{"one missing", "`name` `latency.*.p95_ms` `Plain`", []string{"steps[].p95_ms"}},
		{"untagged field missing", "`name` `steps[].p95_ms` `latency.*.p95_ms`", []string{"Plain"}},
		// A path must be quoted as code: the bare word in prose is not
		// its documentation.
		{"named but not quoted", "name `steps[].p95_ms` `latency.*.p95_ms` `Plain`", []string{"name"}},
		{"nothing documented", "", []string{"name", "steps[].p95_ms", "latency.*.p95_ms", "Plain"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := undocumented(tc.doc, root{}); !slices.Equal(got, tc.want) {
				t.Errorf("undocumented = %q, want %q", got, tc.want)
			}
		})
	}
}

// undocumented lists the JSON paths of roots that doc does not name
// as `code`, in the order of the fields.
func undocumented(doc string, roots ...any) []string {
	var out []string
	for _, root := range roots {
		for _, p := range jsonPaths(reflect.TypeOf(root), "", nil) {
			// compare.json nests two summaries, documented once.
			if strings.HasPrefix(p, "before.") || strings.HasPrefix(p, "after.") {
				continue
			}
			if !strings.Contains(doc, "`"+p+"`") {
				out = append(out, p)
			}
		}
	}
	return out
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	rawType       = reflect.TypeOf(json.RawMessage{})
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// jsonPaths lists the JSON paths of t's fields: "probe.culprits[].episodes",
// "load.latency.*.p95_ms". A type that contains itself (steps of steps)
// is listed once, at its first level.
func jsonPaths(t reflect.Type, prefix string, outer []reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType || t == rawType || slices.Contains(outer, t):
		return []string{prefix}
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		// A type with its own JSON form (the plan, a threshold) is
		// documented as one entry: its Go fields are not its JSON keys.
		return []string{prefix}
	case t.Kind() == reflect.Slice:
		return jsonPaths(t.Elem(), prefix+"[]", outer)
	case t.Kind() == reflect.Map:
		if t.Elem().Kind() == reflect.Struct {
			return jsonPaths(t.Elem(), prefix+".*", outer)
		}
		return []string{prefix}
	case t.Kind() != reflect.Struct:
		return []string{prefix}
	}
	outer = append(outer, t)
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			out = append(out, jsonPaths(f.Type, prefix, outer)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		out = append(out, jsonPaths(f.Type, p, slices.Clip(outer))...)
	}
	return out
}

package reports

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSchemaDocumented keeps SCHEMA.md honest: every field summary.json and
// compare.json can hold must be listed there, by its JSON path. A field
// added to Summary, probes.Summary or rundir.LoadResult fails this test
// until it is documented with its unit.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range []struct {
		prefix string
		v      any
	}{{"", Summary{}}, {"", Comparison{}}} {
		for _, p := range jsonPaths(reflect.TypeOf(root.v), root.prefix, nil) {
			// compare.json nests two summaries, documented once.
			if strings.HasPrefix(p, "before.") || strings.HasPrefix(p, "after.") {
				continue
			}
			if strings.Contains(string(doc), "`"+p+"`") {
				continue
			}
			t.Errorf("SCHEMA.md does not document `%s`", p)
		}
	}
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

func TestPrintSchemaPaths(t *testing.T) {
	if os.Getenv("PRINT_SCHEMA") == "" {
		t.Skip("set PRINT_SCHEMA=1 to list the JSON paths")
	}
	for _, v := range []any{Summary{}, Comparison{}} {
		for _, p := range jsonPaths(reflect.TypeOf(v), "", nil) {
			t.Log(p)
		}
	}
}

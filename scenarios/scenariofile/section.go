package scenariofile

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// A Section is a top-level section of a scenario file that is not the
// plan's own: leakbench's profiles add stack, probe, signoff and faults.
// Into points to a struct whose fields name the section's keys in their
// yaml tags, or to a slice of such structs for a section that is a list of
// mappings (faults: each entry read by the same rules, sectionlist.go).
// The section is read by the plan's rules: keys in any spelling (the yaml
// tag's quietly, another with a deprecation warning), an unknown or
// repeated key is an error naming its line; values are read as the plan's
// options are:
// durations as Go duration strings (a bare 0 too, never negative), whole
// numbers, numbers, true/false, strings. A field of another type (a list,
// say) is decoded by yaml.v3, within the document's bounds, its errors
// naming the line too.
type Section struct {
	Key  string
	Into any
}

var durationType = reflect.TypeFor[time.Duration]()

// section decodes top-level entry e into the Section of its key.
func (d *ydec) section(e kv) {
	var into any
	for _, s := range d.sections {
		if s.Key == e.key {
			into = s.Into
		}
	}
	v := reflect.ValueOf(into)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Slice && v.Elem().Type().Elem().Kind() == reflect.Struct {
		d.sectionList(e.v, e.key, v.Elem()) // sectionlist.go
		return
	}
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("scenariofile: Section %q: Into must point to a struct or a slice of structs, not %T", e.key, into))
	}
	d.structInto(e.v, e.key, v.Elem())
}

// structInto decodes mapping n, at path key, into struct v by the
// Section rules.
func (d *ydec) structInto(n *yaml.Node, key string, v reflect.Value) {
	fields := map[string]int{} // key -> field index
	var keys []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = i
		keys = append(keys, name)
	}
	entries, _ := d.mapping(n, key, keys)
	for _, o := range entries {
		path := key + "." + o.key
		f := v.Field(fields[o.key])
		// The plan's own readers where they know the type (their errors
		// say what was wanted); yaml.v3 for the rest.
		switch {
		case f.Type() == durationType:
			f.SetInt(int64(d.duration(o.v, path)))
			continue
		case f.Type() == reflect.TypeFor[plan.Duration]():
			f.Set(reflect.ValueOf(d.duration(o.v, path)))
			continue
		case f.Kind() == reflect.String:
			f.SetString(d.str(o.v, path))
			continue
		case f.Kind() == reflect.Bool:
			f.SetBool(d.bool(o.v, path))
			continue
		case f.Kind() == reflect.Float64:
			f.SetFloat(d.float(o.v, path))
			continue
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			n := d.int(o.v, path)
			if f.OverflowInt(n) {
				d.errf(o.v, path, "%d is out of range", n)
				n = 0
			}
			f.SetInt(n)
			continue
		}
		if !d.fits(o.v, path, 0) {
			continue
		}
		if err := o.v.Decode(f.Addr().Interface()); err != nil {
			msg := err.Error()
			var te *yaml.TypeError
			if errors.As(err, &te) && len(te.Errors) > 0 {
				_, msg = yamlErr(errors.New(te.Errors[0]))
			}
			d.errf(o.v, path, "%s", msg)
		}
	}
}

// fits reports whether n's tree, aliases expanded, fits the document's
// node budget and depth bound, so that yaml.v3 may decode it.
func (d *ydec) fits(n *yaml.Node, path string, depth int) bool {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return false
	}
	if depth > plan.MaxNesting {
		d.errf(r, path, "nested deeper than %d levels", plan.MaxNesting)
		return false
	}
	for _, c := range r.Content {
		if !d.fits(c, path, depth+1) {
			return false
		}
	}
	return true
}

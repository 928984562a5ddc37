package scenariofile

import (
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// A Liner is a list section's entry that wants to know its line, for the
// errors its own checks report later (faults.Spec, say).
type Liner interface{ SetLine(line int) }

// sectionList decodes sequence n, at path key, into slice v: each entry a
// mapping read into a new element by the Section rules, its errors naming
// key[i].field and the line. Entries implementing Liner learn their line.
func (d *ydec) sectionList(n *yaml.Node, key string, v reflect.Value) {
	items := d.seq(n, key)
	out := reflect.MakeSlice(v.Type(), 0, len(items))
	for i, item := range items {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.structInto(item, fmt.Sprintf("%s[%d]", key, i), elem)
		if l, ok := elem.Addr().Interface().(Liner); ok {
			l.SetLine(d.resolve(item).Line)
		}
		out = reflect.Append(out, elem)
	}
	v.Set(out)
}

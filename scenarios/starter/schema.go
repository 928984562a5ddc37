package starter

// Arguments from a tool's inputSchema (JSON Schema, as MCP servers write
// it: mostly draft 2020-12, some draft 7). What the schema pins down — an
// enum, a const, a default, examples, a type with its bounds, a format —
// becomes a value that plays, varied where the scenario language can vary
// it ({$pick: [...]}, {{randInt A B}}). What it does not — free text, a
// pattern, a schema too deep to follow — becomes a guess that plays, with
// a TODO saying why it is one: never a silent guess presented as right.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Bounds on what one schema may make synthesise.
const (
	maxProps    = 50 // required properties of one object followed
	maxEnum     = 20 // values of an enum kept in a $pick
	maxArgItems = 3  // items of a synthesised array
)

// Argument is one synthesised argument of a call.
type Argument struct {
	Name string
	// Value is in the scenario language: JSON values, templates
	// ("{{randInt 1 10}}") and {$pick: [...]}.
	Value any
	// Note says where the value came from ("enum", "1 ≤ n ≤ 10", ...).
	Note string
	// TODO, when not "", says why Value is a guess.
	TODO string
}

// synth synthesises a value for schema s (root is the whole inputSchema,
// for $ref), at depth. It returns the value, a note and the TODOs found
// (each prefixed with its path below the argument).
type synth struct {
	root  map[string]any
	todos []string
}

func (y *synth) todo(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	y.todos = append(y.todos, msg)
}

// arguments synthesises the required properties of a tool's inputSchema;
// optional lists the others, left out. A schema that is not an object
// schema gives a tool-level TODO.
func arguments(schema any) (args []Argument, optional []string, todo string) {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, nil, fmt.Sprintf("its inputSchema is %s, not a JSON Schema object: no arguments sent", kindOf(schema))
	}
	if t, ok := root["type"].(string); ok && t != "object" {
		return nil, nil, fmt.Sprintf("its inputSchema has type %q, not object: no arguments sent", t)
	}
	props, _ := root["properties"].(map[string]any)
	required := stringList(root["required"])
	for name := range props {
		if !slices.Contains(required, name) {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	if len(required) > maxProps {
		todo = fmt.Sprintf("%d required arguments; the first %d written", len(required), maxProps)
		required = required[:maxProps]
	}
	for _, name := range required {
		y := &synth{root: root}
		ps, ok := props[name]
		if !ok {
			y.todo("", "required but not in properties: its type is unknown")
			args = append(args, Argument{Name: name, Value: "TODO", TODO: strings.Join(y.todos, "; ")})
			continue
		}
		v, note := y.value(ps, "", 1)
		args = append(args, Argument{Name: name, Value: v, Note: note, TODO: strings.Join(y.todos, "; ")})
	}
	return args, optional, todo
}

// value synthesises a value for schema s at path (below the argument).
func (y *synth) value(s any, path string, depth int) (any, string) {
	if depth > MaxSchemaDepth {
		y.todo(path, "nested deeper than %d levels: not followed", MaxSchemaDepth)
		return nil, ""
	}
	switch s := s.(type) {
	case bool:
		if s {
			return "any", "the schema accepts anything"
		}
		y.todo(path, "the schema (false) accepts nothing")
		return nil, ""
	case map[string]any:
		return y.object(s, path, depth)
	}
	y.todo(path, "its schema is %s, not a JSON Schema", kindOf(s))
	return nil, ""
}

// object synthesises from one schema object.
func (y *synth) object(s map[string]any, path string, depth int) (any, string) {
	if ref, ok := s["$ref"].(string); ok {
		target, ok := y.resolve(ref)
		if !ok {
			y.todo(path, "$ref %q not found in the schema", truncate(ref, 60))
			return nil, ""
		}
		return y.value(target, path, depth+1)
	}
	if v, ok := s["const"]; ok {
		return v, "const"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		vals := slices.DeleteFunc(slices.Clone(enum), func(v any) bool { return v == nil })
		if len(vals) == 0 {
			return nil, "enum"
		}
		if len(vals) > maxEnum {
			vals = vals[:maxEnum]
		}
		if len(vals) == 1 {
			return vals[0], "enum"
		}
		return map[string]any{"$pick": vals}, "enum"
	}
	if v, ok := s["default"]; ok {
		return v, "the schema's default"
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		if len(ex) > maxEnum {
			ex = ex[:maxEnum]
		}
		if len(ex) == 1 {
			return ex[0], "the schema's example"
		}
		return map[string]any{"$pick": ex}, "the schema's examples"
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			return y.alternatives(alts, path, depth)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return y.value(merge(s, all), path, depth+1)
	}
	switch typ := typeOf(s); typ {
	case "object":
		return y.objectValue(s, path, depth)
	case "array":
		return y.array(s, path, depth)
	case "string":
		return y.str(s, path)
	case "integer", "number":
		return y.number(s, typ, path)
	case "boolean":
		return map[string]any{"$pick": []any{true, false}}, ""
	case "null":
		return nil, "null"
	case "":
		return "any", "the schema gives no type: any value"
	default:
		y.todo(path, "unknown type %q", truncate(typ, 30))
		return nil, ""
	}
}

// alternatives takes the first of anyOf/oneOf that synthesises without a
// TODO (null skipped), else the first.
func (y *synth) alternatives(alts []any, path string, depth int) (any, string) {
	var first *synth
	var fv any
	var fn string
	for _, a := range alts {
		if m, ok := a.(map[string]any); ok && typeOf(m) == "null" {
			continue
		}
		try := &synth{root: y.root}
		v, note := try.value(a, path, depth+1)
		if len(try.todos) == 0 {
			return v, note
		}
		if first == nil {
			first, fv, fn = try, v, note
		}
	}
	if first == nil {
		return nil, "null"
	}
	y.todos = append(y.todos, first.todos...)
	return fv, fn
}

func (y *synth) objectValue(s map[string]any, path string, depth int) (any, string) {
	props, _ := s["properties"].(map[string]any)
	required := stringList(s["required"])
	if len(required) > maxProps {
		y.todo(path, "%d required properties; the first %d written", len(required), maxProps)
		required = required[:maxProps]
	}
	out := map[string]any{}
	for _, name := range required {
		ps, ok := props[name]
		if !ok {
			y.todo(join(path, name), "required but not in properties")
			out[name] = "TODO"
			continue
		}
		v, _ := y.value(ps, join(path, name), depth+1)
		out[name] = v
	}
	return out, ""
}

func (y *synth) array(s map[string]any, path string, depth int) (any, string) {
	lo, hi := intOf(s["minItems"], 0), intOf(s["maxItems"], -1)
	n := min(max(lo, 1), maxArgItems)
	if hi >= 0 {
		n = min(n, hi)
	}
	if lo > maxArgItems {
		y.todo(path, "at least %d items; %d written", lo, maxArgItems)
	}
	items, ok := s["items"]
	if !ok {
		items = true
	}
	out := make([]any, 0, n)
	for i := range n {
		v, _ := y.value(items, fmt.Sprintf("%s[%d]", path, i), depth+1)
		out = append(out, v)
		if i == 0 && s["uniqueItems"] == true && n > 1 {
			y.todo(path, "unique items wanted: the %d written may repeat", n)
		}
	}
	return out, ""
}

// formats are values for the string formats JSON Schema names.
var formats = map[string]any{
	"date":          "2026-01-{{randInt 10 28}}",
	"date-time":     "2026-01-{{randInt 10 28}}T12:00:00Z",
	"time":          "12:{{randInt 10 59}}:00Z",
	"email":         "user{{user}}@example.com",
	"uri":           "https://example.com/{{user}}",
	"url":           "https://example.com/{{user}}",
	"uri-reference": "https://example.com/{{user}}",
	"iri":           "https://example.com/{{user}}",
	"uuid":          "00000000-0000-4000-8000-0000000{{randInt 10000 99999}}",
	"ipv4":          "192.0.2.{{randInt 1 254}}",
	"ipv6":          "2001:db8::{{randInt 1 9999}}",
	"hostname":      "host{{user}}.example.com",
	"duration":      "PT{{randInt 1 59}}S",
}

func (y *synth) str(s map[string]any, path string) (any, string) {
	if f, ok := s["format"].(string); ok {
		if v, ok := formats[f]; ok {
			return v, "format " + f
		}
		y.todo(path, "format %q: a guess", truncate(f, 30))
	}
	lo, hi := intOf(s["minLength"], 0), intOf(s["maxLength"], -1)
	if p, ok := s["pattern"].(string); ok {
		y.todo(path, "must match %s: a guess that may not", truncate(p, 60))
		return fit("TODO", lo, hi), ""
	}
	if _, ok := s["format"]; !ok {
		y.todo(path, "free text: these are guesses; put values the service knows (or {{data.COLUMN}} from a data file)")
	}
	words := []any{}
	for _, w := range []string{"alpha", "bravo", "charlie"} {
		words = append(words, fit(w, lo, hi))
	}
	return map[string]any{"$pick": words}, ""
}

// fit pads or cuts w to a length in [lo, hi] (hi < 0: no upper bound).
func fit(w string, lo, hi int) string {
	lo = min(lo, 1000)
	if len(w) < lo {
		w += strings.Repeat("x", lo-len(w))
	}
	if hi >= 0 && len(w) > hi {
		w = w[:hi]
	}
	return w
}

func (y *synth) number(s map[string]any, typ, path string) (any, string) {
	lo, hasLo := floatOf(s["minimum"])
	hi, hasHi := floatOf(s["maximum"])
	loEx, hiEx := s["exclusiveMinimum"] == true, s["exclusiveMaximum"] == true // draft 4
	if x, ok := floatOf(s["exclusiveMinimum"]); ok {
		lo, hasLo, loEx = x, true, true
	}
	if x, ok := floatOf(s["exclusiveMaximum"]); ok {
		hi, hasHi, hiEx = x, true, true
	}
	if !hasLo && !hasHi {
		// The size is a guess: the least one, played as it was tried
		// (a report's seconds, a page size), with a way to vary it.
		return 1.0, "no bounds given: 1 (vary it with \"{{randInt A B}}\")"
	}
	note := bounds(lo, hasLo, loEx, hi, hasHi, hiEx)
	// The whole numbers within the bounds.
	a, b := math.Ceil(lo), math.Floor(hi)
	if loEx && a == lo {
		a++
	}
	if hiEx && b == hi {
		b--
	}
	switch {
	case !hasLo:
		a = math.Min(1, b)
	case !hasHi:
		b = a + 9
	}
	if m, ok := floatOf(s["multipleOf"]); ok && m > 0 {
		v := math.Ceil(a/m) * m
		if v > b {
			y.todo(path, "no multiple of %g within the bounds", m)
		}
		return v, note + fmt.Sprintf(", a multiple of %g", m)
	}
	switch {
	case a > b && typ == "number" && hasLo && hasHi:
		return (lo + hi) / 2, note // no whole number inside: the middle
	case a > b:
		y.todo(path, "no whole number within the bounds")
		return lo, note
	case a == b || math.Abs(a) > 1e15 || math.Abs(b) > 1e15:
		return a, note
	}
	return fmt.Sprintf("{{randInt %d %d}}", int64(a), int64(b)), note
}

// bounds writes a range as a note ("2 ≤ n ≤ 9", "0 < n ≤ 0.5").
func bounds(lo float64, hasLo, loEx bool, hi float64, hasHi, hiEx bool) string {
	rel := func(ex bool) string {
		if ex {
			return "<"
		}
		return "≤"
	}
	var b strings.Builder
	if hasLo {
		fmt.Fprintf(&b, "%g %s ", lo, rel(loEx))
	}
	b.WriteString("n")
	if hasHi {
		fmt.Fprintf(&b, " %s %g", rel(hiEx), hi)
	}
	return b.String()
}

// resolve follows a local $ref ("#/$defs/x", "#/definitions/x", "#").
func (y *synth) resolve(ref string) (any, bool) {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	var cur any = y.root
	for part := range strings.SplitSeq(strings.TrimPrefix(rest, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// merge combines allOf's schemas (and s's own keys) shallowly: their
// properties and required lists joined, the first type kept.
func merge(s map[string]any, all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	for _, part := range append([]any{s}, all...) {
		m, ok := part.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch k {
			case "allOf":
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					for pk, pv := range pm {
						props[pk] = pv
					}
				}
			case "required":
				for _, r := range stringList(v) {
					required = append(required, r)
				}
			default:
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// typeOf is a schema's type: its type (the first not null of a list), or
// what its keys imply.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if xs, ok := x.(string); ok && xs != "null" {
				return xs
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return ""
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func floatOf(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func intOf(v any, def int) int {
	f, ok := floatOf(v)
	if !ok || f < 0 || f > 1e6 {
		return def
	}
	return int(f)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "missing"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

package starter

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArguments: what each schema settles becomes a value that plays;
// what it does not is a guess with a TODO saying why.
func TestArguments(t *testing.T) {
	tests := []struct {
		name, schema string
		want         string // the arguments as JSON
		todo         string // a TODO of some argument contains this ("" none)
		optional     string
	}{
		{"enum, const, default, examples", `{"type":"object","required":["a","b","c","d","e"],"properties":{
			"a":{"type":"string","enum":["red","green"]},"b":{"const":7},"c":{"type":"integer","default":3},
			"d":{"type":"string","examples":["x"]},"e":{"type":"string","enum":["only"]}}}`,
			`{"a":{"$pick":["red","green"]},"b":7,"c":3,"d":"x","e":"only"}`, "", ""},
		{"bounds", `{"type":"object","required":["i","n","x","m"],"properties":{
			"i":{"type":"integer","minimum":2,"maximum":9},"n":{"type":"number","exclusiveMinimum":0,"maximum":0.5},
			"x":{"type":"integer","minimum":5},"m":{"type":"integer","minimum":1,"maximum":100,"multipleOf":25}}}`,
			`{"i":"{{randInt 2 9}}","m":25,"n":0.25,"x":"{{randInt 5 14}}"}`, "", ""},
		{"formats, boolean, arrays, nested", `{"type":"object","required":["d","e","u","b","l","o"],"properties":{
			"d":{"type":"string","format":"date"},"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uuid"},
			"b":{"type":"boolean"},"l":{"type":"array","items":{"type":"integer","minimum":1,"maximum":1},"minItems":2},
			"o":{"type":"object","required":["k"],"properties":{"k":{"enum":[1,2]}, "z":{"type":"string"}}},
			"opt":{"type":"string"}}}`,
			`{"b":{"$pick":[true,false]},"d":"2026-01-{{randInt 10 28}}","e":"user{{user}}@example.com","l":[1,1],"o":{"k":{"$pick":[1,2]}},"u":"00000000-0000-4000-8000-0000000{{randInt 10000 99999}}"}`,
			"", "opt"},
		{"free text", `{"type":"object","required":["q"],"properties":{"q":{"type":"string","minLength":6,"maxLength":6}}}`,
			`{"q":{"$pick":["alphax","bravox","charli"]}}`, "free text", ""},
		{"pattern", `{"type":"object","required":["p"],"properties":{"p":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"}}}`,
			`{"p":"TODO"}`, "must match ^[A-Z]{3}-[0-9]+$", ""},
		{"refs and anyOf", `{"type":"object","required":["r","a"],"$defs":{"c":{"enum":["x","y"]}},"properties":{
			"r":{"$ref":"#/$defs/c"},"a":{"anyOf":[{"type":"null"},{"type":"string","format":"free"},{"type":"integer","minimum":3,"maximum":3}]}}}`,
			`{"a":3,"r":{"$pick":["x","y"]}}`, "", ""},
		{"allOf", `{"type":"object","required":["w"],"properties":{"w":{"allOf":[{"type":"object","required":["a"],"properties":{"a":{"const":1}}},{"required":["b"],"properties":{"b":{"const":2}}}]}}}`,
			`{"w":{"a":1,"b":2}}`, "", ""},
		{"a $ref that goes nowhere", `{"type":"object","required":["r"],"properties":{"r":{"$ref":"#/$defs/none"}}}`,
			`{"r":null}`, `$ref "#/$defs/none" not found`, ""},
		{"a required property not described", `{"type":"object","required":["ghost"]}`,
			`{"ghost":"TODO"}`, "required but not in properties", ""},
		{"a type list", `{"type":"object","required":["id"],"properties":{"id":{"type":["null","integer"],"minimum":4,"maximum":4}}}`,
			`{"id":4}`, "", ""},
		{"no type: anything", `{"type":"object","required":["v"],"properties":{"v":{}}}`, `{"v":"any"}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			args, optional, tooltodo := arguments(schema)
			if tooltodo != "" {
				t.Fatalf("tool-level TODO %q", tooltodo)
			}
			got := map[string]any{}
			var todos []string
			for _, a := range args {
				got[a.Name] = a.Value
				if a.TODO != "" {
					todos = append(todos, a.TODO)
				}
			}
			if g := js(got); g != tt.want {
				t.Errorf("arguments %s\nwant      %s", g, tt.want)
			}
			switch all := strings.Join(todos, "; "); {
			case tt.todo == "" && all != "":
				t.Errorf("TODOs %q; want none", all)
			case tt.todo != "" && !strings.Contains(all, tt.todo):
				t.Errorf("TODOs %q; want one saying %q", all, tt.todo)
			}
			if strings.Join(optional, ",") != tt.optional {
				t.Errorf("optional %q, want %q", optional, tt.optional)
			}
		})
	}
}

// TestArgumentsBadSchemas: a schema that is not one, or too deep to
// follow, is said so, in bounded work.
func TestArgumentsBadSchemas(t *testing.T) {
	for _, tt := range []struct{ schema, todo string }{
		{`"a string"`, "inputSchema is a string, not a JSON Schema object"},
		{`null`, "inputSchema is missing"},
		{`{"type":"array"}`, `type "array", not object`},
	} {
		var s any
		_ = json.Unmarshal([]byte(tt.schema), &s)
		if _, _, todo := arguments(s); !strings.Contains(todo, tt.todo) {
			t.Errorf("%s: TODO %q; want %q", tt.schema, todo, tt.todo)
		}
	}
	// 2,000 levels of nesting, and a $ref to itself: cut at the depth.
	deep := strings.Repeat(`{"type":"object","required":["x"],"properties":{"x":`, 2000) + `{}` + strings.Repeat(`}}`, 2000)
	self := `{"type":"object","required":["me"],"properties":{"me":{"$ref":"#"}}}`
	for name, raw := range map[string]string{"deep": `{"type":"object","required":["d"],"properties":{"d":` + deep + `}}`, "self": self} {
		var s any
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatal(err)
		}
		args, _, _ := arguments(s)
		if len(args) != 1 || !strings.Contains(args[0].TODO, "nested deeper than 8 levels") {
			t.Errorf("%s: %+v; want a TODO at the depth bound", name, args)
		}
	}
}

package plan

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestTemplates(t *testing.T) {
	ctx := &Vars{User: 7, Iteration: 3, Scenario: "agents", Rand: rand.New(rand.NewPCG(1, 2))}
	tests := []struct {
		name   string
		args   map[string]any
		prompt bool
		want   string // JSON, or "one of: a|b" for random picks
	}{
		{"constant", map[string]any{"a": 1, "b": "x", "c": []any{true, nil}}, false, `{"a":1,"b":"x","c":[true,null]}`},
		{"user number", map[string]any{"u": "{{user}}", "i": "{{ iteration }}"}, false, `{"i":3,"u":7}`},
		{"interpolated", map[string]any{"s": "u{{user}}-i{{iteration}}-{{scenario}}"}, false, `{"s":"u7-i3-agents"}`},
		{"escaped", map[string]any{"s": "\"q\" {{scenario}}\n"}, false, `{"s":"\"q\" agents\n"}`},
		{"nested", map[string]any{"o": map[string]any{"l": []any{"{{user}}", 2}}}, false, `{"o":{"l":[7,2]}}`},
		{"pick words", map[string]any{"c": "{{pick red green}}"}, false, `one of: {"c":"red"}|{"c":"green"}`},
		{"pick values", map[string]any{"c": map[string]any{"$pick": []any{1, map[string]any{"x": true}}}}, false, `one of: {"c":1}|{"c":{"x":true}}`},
		{"randInt", map[string]any{"n": "{{randInt 5 5}}"}, false, `{"n":5}`},
		{"prompt strings", map[string]any{"n": 3, "u": "{{user}}", "b": true}, true, `{"b":"true","n":"3","u":"7"}`},
		{"prompt pick", map[string]any{"p": map[string]any{"$pick": []any{1}}}, true, `{"p":"1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := compileArgs(tt.args, tt.prompt)
			if err != nil {
				t.Fatal(err)
			}
			got := string(n.AppendJSON(nil, ctx))
			if !json.Valid([]byte(got)) {
				t.Fatalf("invalid JSON %s", got)
			}
			if alts, ok := strings.CutPrefix(tt.want, "one of: "); ok {
				seen := map[string]bool{}
				for range 200 {
					seen[string(n.AppendJSON(nil, ctx))] = true
				}
				want := strings.Split(alts, "|")
				for _, a := range want {
					if !seen[a] {
						t.Errorf("never rendered %s; rendered %v", a, seen)
					}
				}
				for r := range seen {
					if !slices.Contains(want, r) {
						t.Errorf("rendered %s, not one of %v", r, want)
					}
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}

	name, err := compileText("tool-{{randInt 1 3}}")
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for range 50 {
		if n := name.Render(ctx, &buf); n != "tool-1" && n != "tool-2" && n != "tool-3" {
			t.Fatalf("rendered %q", n)
		}
	}
	if fixed, _ := compileText("plain"); fixed.n != nil || fixed.Render(ctx, &buf) != "plain" {
		t.Errorf("a plain name should stay a constant")
	}
}

func TestTemplateErrors(t *testing.T) {
	for src, want := range map[string]string{
		"{{user":                 "not closed",
		"{{}}":                   "empty placeholder",
		"{{nope}}":               "unknown placeholder",
		"{{user 1}}":             "takes no arguments",
		"{{randInt 1}}":          "takes two integers",
		"{{randInt a b}}":        "must be integers",
		"{{randInt 5 1}}":        "LO must be <= HI",
		"{{pick}}":               "at least one word",
		"{{randInt -9e18 9e18}}": "must be integers",
	} {
		if _, err := compileString(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
	if _, err := compileArgs(map[string]any{"x": map[string]any{"$pick": []any{}}}, false); err == nil {
		t.Error("empty $pick accepted")
	}
}

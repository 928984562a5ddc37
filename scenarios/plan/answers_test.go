package plan

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/userdata"
)

// TestDataFiles reads CSV and JSON data and renders rows into templates.
func TestDataFiles(t *testing.T) {
	csvT, err := userdata.ReadCSV(strings.NewReader("\ufeffemail,\"full name\"\na@x,\"Ada, L\"\nb@x,Bob\n"), "u.csv")
	if err == nil {
		t.Fatalf("a column name with a blank: want an error, got %v", csvT.Columns)
	}
	csvT, err = userdata.ReadCSV(strings.NewReader("\ufeffemail,name\na@x,\"Ada, L\"\nb@x,Bob\n"), "u.csv")
	if err != nil {
		t.Fatal(err)
	}
	jsonT, err := userdata.ReadJSON(strings.NewReader(`[{"email":"a@x","name":"Ada, L","n":7,"tags":["a"]},{"email":"b@x","name":"Bob","n":8.5,"tags":[]}]`), "u.json")
	if err != nil {
		t.Fatal(err)
	}
	if csvT.Rows() != 2 || csvT.Cell(0, 1) != "Ada, L" || jsonT.Rows() != 2 || jsonT.Cell(1, 2) != "8.5" {
		t.Fatalf("cells: csv %q %q, json %q", csvT.Columns, csvT.Cell(0, 1), jsonT.Cell(1, 2))
	}
	tpl, err := compileValue(map[string]any{"who": "{{data.email}}", "n": "{{data.n}}", "tags": "{{data.tags}}", "s": "{{data.name}} #{{data.n}}"}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tpl.bind(&binder{data: jsonT, file: "u.json"}); err != nil {
		t.Fatal(err)
	}
	got := string(tpl.AppendJSON(nil, &Vars{Data: jsonT, Row: 0}))
	if want := `{"n":7,"s":"Ada, L #7","tags":["a"],"who":"a@x"}`; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
}

// TestCaptureRendering: a whole-string {{vars.x}} keeps the captured
// JSON type; inside text it is the value's text.
func TestCaptureRendering(t *testing.T) {
	answer := []byte(`{"structuredContent":{"run_id":42,"name":"nightly"},"content":[{"type":"text","text":"ok"}]}`)
	bd := &binder{}
	run := CompiledCapture{Name: "run", Path: "structuredContent.run_id", Slot: bd.capture("run")}
	name := CompiledCapture{Name: "name", Path: "structuredContent.name", Slot: bd.capture("name")}
	v := &Vars{Captured: make([]Captured, 2)}
	for _, c := range []CompiledCapture{run, name} {
		raw, text, ok := c.Find(answer)
		if !ok {
			t.Fatalf("%s found nothing", c.Path)
		}
		v.Captured[c.Slot] = Captured{Raw: raw, Text: text, Set: true}
	}
	tpl, err := compileValue(map[string]any{"run_id": "{{vars.run}}", "label": "{{vars.name}}/{{vars.run}}", "n": "{{vars.name}}"}, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tpl.bind(bd); err != nil {
		t.Fatal(err)
	}
	if got, want := string(tpl.AppendJSON(nil, v)), `{"label":"nightly/42","n":"nightly","run_id":42}`; got != want {
		t.Errorf("rendered %s, want %s", got, want)
	}
	if _, _, ok := (&CompiledCapture{Path: "structuredContent.job"}).Find(answer); ok {
		t.Error("a path to nothing found something")
	}
}

// TestChecks judges answers.
func TestChecks(t *testing.T) {
	answer := []byte(`{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"n":3,"s":"done","o":{"a":[1,2]},"z":null}}`)
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"isError == false", true},
		{"isError == true", false},
		{"content.0.text contains world", true},
		{`content.0.text contains "o w"`, true},
		{"content.0.text matches ^hello", true},
		{"content.0.text matches ^world", false},
		{"structuredContent.n == 3", true},
		{"structuredContent.n == 3.0", true},
		{`structuredContent.n == "3"`, false},
		{"structuredContent.s == done", true},
		{"structuredContent.s != done", false},
		{"structuredContent.o == {\"a\":[1,2]}", true},
		{"structuredContent.z == null", true},
		{"structuredContent.missing exists", false},
		{"structuredContent.missing missing", true},
		{"structuredContent.missing != 1", true},
		{"content.#(type==\"text\").text == \"hello world\"", true},
		{"content.# == 1", true},
	} {
		c, err := ParseCheck(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		cc, err := compileCheck(c)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if got := cc.Eval(answer); got != tc.want {
			t.Errorf("%s on %s = %v, want %v", tc.expr, answer, got, tc.want)
		}
		// The expression reads back as the same check.
		again, err := ParseCheck(c.String())
		if err != nil || again.String() != c.String() {
			t.Errorf("%s: String() %q reads back as %q, %v", tc.expr, c.String(), again.String(), err)
		}
	}
}

// FuzzParseCheck: check expressions never panic; one that parses
// compiles or is refused cleanly, evaluates without panicking, and its
// String() reads back as itself.
func FuzzParseCheck(f *testing.F) {
	for _, s := range []string{"isError == false", "a.b contains \"x y\"", "a matches ^x$", "a exists", "#(a==\"b\").c == {\"x\":1}", "a.. == 1", "@reverse.0 == 2", "a\\. == 1", "x != null"} {
		f.Add(s, []byte(`{"a":{"b":"x y"},"c":[1,2]}`))
	}
	f.Fuzz(func(t *testing.T, expr string, answer []byte) {
		c, err := ParseCheck(expr)
		if err != nil {
			return
		}
		cc, err := compileCheck(c)
		if err != nil {
			return
		}
		_ = cc.Eval(answer)
		again, err := ParseCheck(c.String())
		if err != nil {
			t.Fatalf("%q: String() %q does not read back: %v", expr, c.String(), err)
		}
		if again.String() != c.String() {
			t.Fatalf("%q: String() %q reads back as %q", expr, c.String(), again.String())
		}
	})
}

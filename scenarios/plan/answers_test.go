package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/userdata"
)

// writeFiles writes name → content into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const answersHead = "scenarios:\n  s:\n    executor: constant-vus\n    vus: 2\n    duration: 1s\n    flow:\n"

// TestAnswerRules: captures, checks, data and http steps, the good and
// the bad side by side; bad input is a plan error naming file:line (and
// the data file's line).
func TestAnswerRules(t *testing.T) {
	files := map[string]string{
		"users.csv":  "email,team\na@x,red\nb@x,blue\n",
		"ragged.csv": "email,team\na@x,red\nb@x\n",
		"one.csv":    "email\na@x\n",
		"users.json": "[\n {\"email\": \"a@x\", \"n\": 1},\n {\"email\": \"b@x\"}\n]\n",
		"bad.json":   "[{\"email\": \"a@x\"}, {\"email\": \"b@x\", \"x\": 2}]",
	}
	dir := writeFiles(t, files)
	for _, tc := range []struct{ name, flow, want string }{
		{"capture and use", `      - tools/call: {name: a, capture: {job: structuredContent.job_id}}
      - tools/call: {name: b, arguments: {id: "{{vars.job}}"}}
`, ""},
		{"check forms", `      - tools/call:
          name: a
          check: ["isError == false", "content.0.text contains hi", "a.b matches ^x$", "x exists", "y missing", {path: z, equals: 3}, {isError: false}]
`, ""},
		{"data and http", `      - http: {method: POST, url: "/api/{{data.email}}", body: {team: "{{data.team}}"}, expectStatus: [200, 201]}
`, ""},
		{"var used before its capture", `      - tools/call: {name: b, arguments: {id: "{{vars.job}}"}}
      - tools/call: {name: a, capture: {job: id}}
`, `s.yaml:9: scenarios.s.flow[0].tools/call.arguments: {{vars.job}}: no earlier step captures job`},
		{"var in own step", `      - tools/call: {name: "{{vars.job}}", capture: {job: id}}
`, `s.yaml:9: scenarios.s.flow[0].tools/call.name: {{vars.job}}: no earlier step captures job`},
		{"bad path", `      - tools/call: {name: a, capture: {job: "a..b"}}
`, `s.yaml:9: scenarios.s.flow[0].tools/call.capture.job: path "a..b": empty component at 3`},
		{"bad check path", `      - tools/call: {name: a, check: ["#(name==\"x\" == 1"]}
`, `s.yaml:9: scenarios.s.flow[0].tools/call.check[0]: path "#(name==\"x\" == 1": '(' is not closed`},
		{"bad regexp", `      - tools/call: {name: a, check: ["a matches ("]}
`, "not a regular expression"},
		{"bad operator", `      - ping: {check: ["a ~= 3"]}
`, `unknown operator "~= 3"`},
		{"unknown modifier", `      - ping: {capture: {x: "@nope"}}
`, "unknown modifier @nope"},
		{"unknown column", `      - tools/call: {name: a, arguments: {x: "{{data.mail}}"}}
`, `{{data.mail}}: users.csv has no column "mail"; its columns are email, team`},
		{"capture on think", `      - think: 1s
      - ping: {capture: {x: a}}
`, ""},
		{"http origin", `      - http: http://example.com/api
`, `is not on the target's origin`},
		{"http bad status", `      - http: {url: /x, expectStatus: 999}
`, "999 is not an HTTP status"},
		{"http reserved header", `      - http: {url: /x, headers: {Authorization: x}}
`, "set by the client itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "target: http://127.0.0.1:1/mcp\ndata: users.csv\n" + answersHead + tc.flow
			path := filepath.Join(dir, "s.yaml")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadFile(path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidPlan)):
				t.Fatalf("error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ data, want string }{
		{"ragged.csv", "s.yaml:1: data.file: ragged.csv:3: this row's number of fields differs from the header's"},
		{"bad.json", `bad.json:1: row 2 has key "x", which the first row does not`},
		{"{file: one.csv, mode: unique}", "unique: the scenario may run 2 users at once but one.csv has 1 rows"},
		{"{file: users.csv, mode: shuffled}", `unknown mode "shuffled"`},
		{"missing.csv", "missing.csv: no such file"},
	} {
		src := "data: " + tc.data + "\n" + answersHead + "      - tools/call: {name: a, arguments: {e: \"{{data.email}}\"}}\n"
		path := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("data %s: error %v, want %q", tc.data, err, tc.want)
		}
	}
}

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

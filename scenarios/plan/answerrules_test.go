package plan_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
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
			_, err := scenariofile.Load(path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, plan.ErrInvalidPlan)):
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
		if _, err := scenariofile.Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("data %s: error %v, want %q", tc.data, err, tc.want)
		}
	}
}

// Package githubaction holds an example workflow for leakbench's GitHub
// Action (action.yml at the repository root, its work in
// scripts/github-action.sh). The tests check that the action, the script
// and the example fit together, and run the action's own build and run
// steps here, with the variables GitHub sets, against a real stack whose
// reference gateway stands for the user's service.
package githubaction

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/stack"
)

var (
	root       = filepath.Join("..", "..")
	actionPath = filepath.Join(root, "action.yml")
	scriptPath = filepath.Join(root, "scripts", "github-action.sh")
	exampleWF  = "workflow.yml"
)

type step struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

type input struct {
	Description string  `yaml:"description"`
	Required    bool    `yaml:"required"`
	Default     *string `yaml:"default"`
}

type action struct {
	Name    string           `yaml:"name"`
	Inputs  map[string]input `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func loadAction(t *testing.T) (*action, string) {
	t.Helper()
	raw := readFile(t, actionPath)
	var a action
	if err := yaml.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return &a, raw
}

// stepRunning is the action's step whose run holds s.
func (a *action) stepRunning(t *testing.T, s string) step {
	t.Helper()
	for _, st := range a.Runs.Steps {
		if strings.Contains(st.Run, s) {
			return st
		}
	}
	t.Fatalf("action.yml has no step that runs %q", s)
	return step{}
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// evalEnv evaluates a composite step's env the way the runner would, for
// the few expressions action.yml uses: inputs.NAME (its default when not
// given), env.NAME, runner.temp and github.action_path, joined by ||.
func (a *action) evalEnv(t *testing.T, st step, inputs, env map[string]string) map[string]string {
	t.Helper()
	value := func(term string) string {
		switch {
		case strings.HasPrefix(term, "inputs."):
			name := strings.TrimPrefix(term, "inputs.")
			in, ok := a.Inputs[name]
			if !ok {
				t.Fatalf("action.yml: step %q reads undeclared input %q", st.Name, name)
			}
			if v, ok := inputs[name]; ok {
				return v
			}
			if in.Default != nil {
				return *in.Default
			}
			return ""
		case strings.HasPrefix(term, "env."):
			return env[strings.TrimPrefix(term, "env.")]
		case term == "runner.temp":
			return env["RUNNER_TEMP"]
		case term == "github.action_path":
			return env["GITHUB_ACTION_PATH"]
		}
		t.Fatalf("action.yml: step %q: expression %q is not one this test evaluates", st.Name, term)
		return ""
	}
	out := map[string]string{}
	for k, v := range st.Env {
		out[k] = exprRE.ReplaceAllStringFunc(v, func(m string) string {
			for term := range strings.SplitSeq(exprRE.FindStringSubmatch(m)[1], "||") {
				if v := value(strings.TrimSpace(term)); v != "" {
					return v
				}
			}
			return ""
		})
	}
	return out
}

// TestActionFiles: action.yml and the example workflow parse; every input
// the script reads reaches it through the run step's env from a declared
// input; every output is one the script writes; every input is used; the
// flags the script gives leakbench are leakbench's; the example calls the
// action with declared inputs, the probe DSN from a secret and a restored
// baseline.
func TestActionFiles(t *testing.T) {
	a, raw := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	if in, ok := a.Inputs["target"]; !ok || !in.Required {
		t.Errorf("action.yml: the input target is missing or not required")
	}
	for _, m := range regexp.MustCompile(`inputs\.([a-z0-9-]+)`).FindAllStringSubmatch(raw, -1) {
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	for name := range a.Inputs {
		if !strings.Contains(raw, "inputs."+name+" ") && !strings.Contains(raw, "inputs."+name+"}") && !strings.Contains(raw, "inputs."+name+" }") {
			t.Errorf("action.yml declares the input %s but never uses it", name)
		}
	}

	build := a.stepRunning(t, "go build")
	if !strings.Contains(build.Run, `go build -o "$RUNNER_TEMP/leakbench" ./cmd/leakbench`) || !strings.Contains(build.Run, "$GITHUB_ACTION_PATH") {
		t.Errorf("action.yml: the build step %q does not build ./cmd/leakbench from the action's path into $RUNNER_TEMP", build.Run)
	}
	run := a.stepRunning(t, "scripts/github-action.sh")
	if run.ID == "" || run.Shell != "bash" {
		t.Errorf("action.yml: the script's step needs an id and shell: bash (id %q, shell %q)", run.ID, run.Shell)
	}
	script := readFile(t, scriptPath)
	if !strings.Contains(script, "set -euo pipefail") {
		t.Errorf("the script does not set -euo pipefail")
	}
	// Every variable the script reads: set by the step's env, or by GitHub.
	github := map[string]bool{"GITHUB_WORKSPACE": true, "GITHUB_OUTPUT": true, "GITHUB_STEP_SUMMARY": true, "RUNNER_TEMP": true}
	for _, m := range regexp.MustCompile(`\$\{?((?:INPUT|LEAKBENCH|GITHUB|RUNNER)_[A-Z_]+)`).FindAllStringSubmatch(script, -1) {
		if _, ok := run.Env[m[1]]; !ok && !github[m[1]] {
			t.Errorf("the script reads $%s, which the action's run step does not set", m[1])
		}
	}
	for k, v := range run.Env {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			want := "${{ inputs." + strings.ToLower(strings.ReplaceAll(name, "_", "-")) + " }}"
			if v != want {
				t.Errorf("action.yml: %s: %q, want %q", k, v, want)
			}
			if !strings.Contains(script, k) {
				t.Errorf("action.yml sets %s, which the script does not read", k)
			}
		}
	}
	for env, in := range map[string]string{"LEAKBENCH_PROBE_DSN": "probe-dsn", "LEAKBENCH_PGBOUNCER_ADMIN_DSN": "pgbouncer-admin-dsn"} {
		if !strings.Contains(run.Env[env], "inputs."+in) {
			t.Errorf("action.yml: the secret input %s does not reach the script as %s (env %q)", in, env, run.Env[env])
		}
	}
	for name, o := range a.Outputs {
		if o.Value != "${{ steps."+run.ID+".outputs."+name+" }}" {
			t.Errorf("action.yml: output %s = %q, want the script step's output", name, o.Value)
		}
		if !strings.Contains(script, `echo "`+name+`=`) {
			t.Errorf("action.yml: output %s is not one the script writes", name)
		}
	}
	for _, want := range []string{"exit-code", "report", "verdict"} {
		if _, ok := a.Outputs[want]; !ok {
			t.Errorf("action.yml has no output %s", want)
		}
	}
	var upload *step
	for i, st := range a.Runs.Steps {
		if strings.HasPrefix(st.Uses, "actions/upload-artifact@v4") {
			upload = &a.Runs.Steps[i]
		}
	}
	if upload == nil || upload.If != "always()" || upload.With["path"] != "${{ inputs.out }}" {
		t.Errorf("action.yml: no actions/upload-artifact@v4 step with if: always() uploading inputs.out: %+v", upload)
	}

	// The flags the script gives leakbench run are leakbench's.
	flags := leakbenchFlags(t)
	for _, line := range strings.Split(script, "\n") {
		if !regexp.MustCompile(`args\+?=\(`).MatchString(line) || strings.Contains(line, "extra") {
			continue
		}
		for _, m := range regexp.MustCompile(`--([a-z][a-z-]+)`).FindAllStringSubmatch(line, -1) {
			if !flags[m[1]] {
				t.Errorf("the script gives leakbench --%s, which it does not define: %s", m[1], strings.TrimSpace(line))
			}
		}
	}
	if out, err := exec.Command("bash", "-n", scriptPath).CombinedOutput(); err != nil {
		t.Errorf("bash -n %s: %v\n%s", scriptPath, err, out)
	}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command(sc, scriptPath).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", scriptPath, err, out)
		}
	}

	checkExample(t, a)
}

// leakbenchFlags are the flags the CLI defines, read from its sources.
func leakbenchFlags(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "cmd", "leakbench", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/leakbench sources: %v", err)
	}
	def := regexp.MustCompile(`(?:fs\.(?:String|Bool|Int|Duration|Func|StringVar|BoolVar|Var)\((?:[^,"]+, )?|cliflag\.NewSecret\(fs, )"([a-z-]+)"`)
	flags := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, m := range def.FindAllStringSubmatch(readFile(t, f), -1) {
			flags[m[1]] = true
		}
	}
	return flags
}

// ghStep is one run of the action's script step, as GitHub runs it.
type ghStep struct {
	ws, temp                string
	summary, output         string
	stdout, stderr          string
	code                    int
	summaryText, outputText string
	outputs                 map[string]string
}

// runScriptStep runs the action's script step with bash, in workspace ws,
// with the variables GitHub sets and the step's env evaluated from inputs.
func runScriptStep(t *testing.T, ctx context.Context, a *action, ws, temp string, inputs map[string]string) *ghStep {
	t.Helper()
	st := a.stepRunning(t, "scripts/github-action.sh")
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	g := &ghStep{ws: ws, temp: temp, summary: filepath.Join(files, "step_summary.md"), output: filepath.Join(files, "output")}
	for _, f := range []string{g.summary, g.output} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gh := map[string]string{
		"GITHUB_ACTIONS": "true", "CI": "true",
		"GITHUB_WORKSPACE": ws, "RUNNER_TEMP": temp,
		"GITHUB_STEP_SUMMARY": g.summary, "GITHUB_OUTPUT": g.output,
		"GITHUB_ACTION_PATH": absRoot,
	}
	env := cleanEnv()
	for k, v := range gh {
		env = append(env, k+"="+v)
	}
	for k, v := range a.evalEnv(t, st, inputs, gh) {
		env = append(env, k+"="+v)
	}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
	cmd.Dir, cmd.Env = ws, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		g.code = exit.ExitCode()
	default:
		t.Fatalf("run the script step: %v", err)
	}
	g.stdout, g.stderr = stdout.String(), stderr.String()
	g.summaryText, g.outputText = readFile(t, g.summary), readFile(t, g.output)
	g.outputs = map[string]string{}
	for line := range strings.Lines(g.outputText) {
		if k, v, ok := strings.Cut(strings.TrimRight(line, "\n"), "="); ok {
			g.outputs[k] = v
		}
	}
	return g
}

// cleanEnv is this process's environment without what GitHub or the
// action would set: a developer's own LEAKBENCH_PROBE_DSN must not join.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") || strings.HasPrefix(k, "LEAKBENCH_") && k != testenv.RequireVar {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (g *ghStep) String() string {
	return "exit " + strconv.Itoa(g.code) + "\n--- stdout:\n" + g.stdout + "\n--- stderr:\n" + g.stderr + "\n--- GITHUB_OUTPUT:\n" + g.outputText
}

// TestScriptRefusesBadInputs: inputs the action cannot use are exit 2,
// with the outputs and a summary written, before leakbench is run.
func TestScriptRefusesBadInputs(t *testing.T) {
	a, _ := loadAction(t)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "s.yaml"), []byte("scenarios: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const secret = "pw-on-the-command-line-7731"
	for _, tc := range []struct {
		name   string
		inputs map[string]string
		want   string
	}{
		{"no target", map[string]string{"scenario": "s.yaml"}, "target"},
		{"no scenario", map[string]string{"target": "http://127.0.0.1:1/mcp"}, "scenario"},
		{"missing scenario", map[string]string{"target": "http://127.0.0.1:1/mcp", "scenario": "nope.yaml"}, "nope.yaml"},
		{"both", map[string]string{"target": "http://127.0.0.1:1/mcp", "scenario": "s.yaml", "profile": "ci"}, "not both"},
		{"fail-on", map[string]string{"target": "http://127.0.0.1:1/mcp", "scenario": "s.yaml", "fail-on": "sometimes"}, "fail-on"},
		{"secret flag", map[string]string{"target": "http://127.0.0.1:1/mcp", "scenario": "s.yaml", "args": "--keep-query-text\n--probe-dsn=postgres://p:" + secret + "@h/db"}, "--probe-dsn"},
		{"single-dash secret flag", map[string]string{"target": "http://127.0.0.1:1/mcp", "scenario": "s.yaml", "args": "-pgbouncer-admin-dsn x"}, "-pgbouncer-admin-dsn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g := runScriptStep(t, ctx, a, ws, t.TempDir(), tc.inputs)
			if g.code != 2 || g.outputs["exit-code"] != "2" || !strings.Contains(g.stdout+g.stderr, tc.want) || !strings.Contains(g.summaryText, "bad usage") {
				t.Errorf("want exit 2 naming %q, with exit-code=2 and a summary:\n%s\n--- summary:\n%s", tc.want, g, g.summaryText)
			}
			if strings.Contains(g.stdout+g.stderr+g.summaryText+g.outputText, secret) {
				t.Errorf("the refused secret shows in the step's output or summary:\n%s", g)
			}
		})
	}
}

// scenarioYAML is a 5 s load of the reference gateway: one call in four a
// slow report the client abandons, which makes commit-in-finally leak.
const scenarioYAML = `probe: {interval: 100ms, stuck_after: 2s, drain: 4s}
timeout: 5s
scenarios:
  agents:
    executor: constant-vus
    vus: 10
    duration: 5s
    gracefulStop: 2s
    flow:
      - think: { uniform: [100ms, 300ms] }
      - choose:
          - weight: 3
            steps: [{ tools/call: { name: get_team_tools } }]
          - weight: 1
            steps: [{ tools/call: { name: generate_report, arguments: { seconds: 2 }, abortAfter: 900ms } }]
thresholds:
  mcp_req_failed: ["rate<0.05"]
`

func startStack(t *testing.T, ctx context.Context, variant string) *fixtures.Env {
	t.Helper()
	env, err := fixtures.StartLocal(ctx, stack.Config{Variant: variant, Users: 10, IdleInTxTimeout: 3 * time.Second})
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("close the %s stack: %v", variant, err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("start the %s stack: %v", variant, err)
	}
	return env
}

func password(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 8 {
		t.Fatalf("DSN without a password worth looking for")
	}
	return pw
}

// checkNoSecret: none of the secrets shows in what the step printed, its
// summary, its outputs or any file under out.
func checkNoSecret(t *testing.T, g *ghStep, out string, secrets map[string]string) {
	t.Helper()
	for what, s := range secrets {
		for where, text := range map[string]string{"stdout": g.stdout, "stderr": g.stderr, "the step summary": g.summaryText, "GITHUB_OUTPUT": g.outputText} {
			if strings.Contains(text, s) {
				t.Errorf("the %s shows in %s", what, where)
			}
		}
		_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if raw, err := os.ReadFile(path); err == nil && bytes.Contains(raw, []byte(s)) {
					t.Errorf("the %s is in %s", what, path)
				}
			}
			return nil
		})
	}
}

// TestActionRunsOnAService builds leakbench as the action does and runs
// its script step twice, each against a real local stack whose reference
// gateway is "the user's service": the fixed variant passes (exit 0, the
// report on the summary page, the outputs set); its run, kept as the
// baseline, judges a run of the leaky commit-in-finally, which regresses
// and fails the step (99), the regression verdict leading the summary. No
// secret of the stacks shows anywhere the step writes.
func TestActionRunsOnAService(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: two local stacks (PostgreSQL, PgBouncer, the gateway) under load")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, _ := loadAction(t)
	temp, ws := t.TempDir(), t.TempDir()

	buildStep(t, ctx, a, ws, temp)
	if err := os.WriteFile(filepath.Join(ws, "leakbench.yaml"), []byte(scenarioYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	run := func(variant string, extra map[string]string) (*ghStep, map[string]string) {
		env := startStack(t, ctx, variant)
		if err := os.WriteFile(filepath.Join(ws, "tokens.txt"), []byte(strings.Join(env.Tokens, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		inputs := map[string]string{
			"target":              env.GatewayURL,
			"scenario":            "leakbench.yaml",
			"probe-dsn":           env.ProbeDSN,
			"pgbouncer-admin-dsn": env.PgBouncerAdminDSN,
			"metrics-url":         env.GatewayMetricsURL,
			"tokens-file":         "tokens.txt",
			"name":                "leakbench-" + variant,
		}
		for k, v := range extra {
			inputs[k] = v
		}
		t0 := time.Now()
		g := runScriptStep(t, ctx, a, ws, temp, inputs)
		t.Logf("%s: the script step took %.1fs, exit %d", variant, time.Since(t0).Seconds(), g.code)
		secrets := map[string]string{"probe DSN password": password(t, env.ProbeDSN), "PgBouncer password": password(t, env.PgBouncerAdminDSN)}
		for i, tok := range env.Tokens {
			secrets["bearer token "+strconv.Itoa(i)] = tok
		}
		if err := env.Close(); err != nil {
			t.Errorf("close the %s stack: %v", variant, err)
		}
		return g, secrets
	}
	out := filepath.Join(ws, "leakbench-out") // the default of the input out

	// 1. fixed: passes.
	g, secrets := run("fixed", nil)
	if g.code != 0 {
		t.Fatalf("fixed: want exit 0\n%s", g)
	}
	report := readFile(t, filepath.Join(out, "run", "report.md"))
	headline, _, _ := strings.Cut(report, "\n")
	if !strings.Contains(g.summaryText, report) {
		t.Errorf("fixed: the step summary does not hold the run's report.md:\n%s", g.summaryText)
	}
	if n := strings.Count(g.summaryText, headline); n != 1 {
		t.Errorf("fixed: the report's headline is %d times on the summary, want once", n)
	}
	want := map[string]string{"exit-code": "0", "report": "leakbench-out/run/report.md", "verdict": strings.TrimPrefix(headline, "# "), "run-dir": "leakbench-out/run", "compare-report": "", "regression": ""}
	for k, v := range want {
		if got, ok := g.outputs[k]; !ok || got != v {
			t.Errorf("fixed: output %s = %q (set: %v), want %q", k, got, ok, v)
		}
	}
	if !strings.Contains(g.outputs["verdict"], "PASS") {
		t.Errorf("fixed: verdict %q, want a PASS", g.outputs["verdict"])
	}
	if !strings.Contains(report, "Stuck episodes") {
		t.Errorf("fixed: the report has no probe rows: the probe DSN did not reach leakbench\n%s", report)
	}
	for _, f := range []string{"summary.json", "samples.jsonl", "junit.xml", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, "run", f)); err != nil {
			t.Errorf("fixed: the run directory has no %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "leakbench.log")); err != nil {
		t.Errorf("fixed: no leakbench.log in out: %v", err)
	}
	checkNoSecret(t, g, out, secrets)

	// The baseline, as the example workflow keeps it: the run directory.
	if o, err := exec.Command("cp", "-r", filepath.Join(out, "run"), filepath.Join(ws, "leakbench-baseline")).CombinedOutput(); err != nil {
		t.Fatalf("keep the baseline: %v\n%s", err, o)
	}

	// 2. commit-in-finally against the baseline: the verdict fails (99),
	// the comparison runs and is on the summary too. The same out again:
	// the action replaces its own run directory.
	g, secrets = run("commit-in-finally", map[string]string{"baseline": "leakbench-baseline", "args": "--keep-query-text"})
	if g.code != 99 {
		t.Fatalf("commit-in-finally: want exit 99 (the leak fails the verdict)\n%s", g)
	}
	report = readFile(t, filepath.Join(out, "run", "report.md"))
	headline, _, _ = strings.Cut(report, "\n")
	if !strings.Contains(headline, "FAIL") || g.outputs["verdict"] != strings.TrimPrefix(headline, "# ") || g.outputs["exit-code"] != "99" {
		t.Errorf("commit-in-finally: headline %q, outputs %v: want a FAIL verdict and exit-code 99", headline, g.outputs)
	}
	if g.outputs["compare-report"] != "leakbench-out/compare/report.md" || g.outputs["compare-exit-code"] != "99" || g.outputs["regression"] != "fail" {
		t.Errorf("commit-in-finally: the regression verdict's outputs: %v", g.outputs)
	}
	cmp := readFile(t, filepath.Join(out, "compare", "report.md"))
	_, cmpBody, _ := strings.Cut(cmp, "\n")
	if !strings.Contains(g.summaryText, report) || !strings.Contains(g.summaryText, cmpBody) || !strings.Contains(g.summaryText, "regression check: FAIL — after regressed: ") {
		t.Errorf("commit-in-finally: the summary lacks the run's report or the regression verdict:\n%s", g.summaryText)
	}
	if !strings.Contains(cmp, "leakbench-baseline") {
		t.Errorf("commit-in-finally: the comparison does not name the baseline's directory:\n%s", cmp)
	}
	if !strings.Contains(g.stdout, "--keep-query-text") {
		t.Errorf("commit-in-finally: the args input did not reach leakbench:\n%s", g.stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "compare", "compare.json")); err != nil {
		t.Errorf("commit-in-finally: no compare.json: %v", err)
	}
	if !slices.ContainsFunc(strings.Split(g.stdout, "\n"), func(l string) bool { return strings.HasPrefix(l, "::error ") }) {
		t.Errorf("commit-in-finally: no ::error annotation on the failed verdict:\n%s", g.stdout)
	}
	checkNoSecret(t, g, out, secrets)
	t.Logf("the whole test took %.1fs", time.Since(start).Seconds())
}

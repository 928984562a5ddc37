// Package ci holds CI examples (GitHub Actions, GitLab CI) that sign off
// with leakbench; the test checks that they parse and hold the steps and
// paths the README relies on.
package ci_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func load(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// leakbenchFlags are the flags the CLI defines, read from its sources, so
// that an example cannot use a flag leakbench does not have.
func leakbenchFlags(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "cmd", "leakbench", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/leakbench sources: %v", err)
	}
	def := regexp.MustCompile(`fs\.(?:String|Bool|Int|Duration|Func|StringVar|BoolVar|Var)\((?:[^,]+, )?"([a-z-]+)"`)
	flags := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range def.FindAllStringSubmatch(string(src), -1) {
			flags[m[1]] = true
		}
	}
	return flags
}

// checkCommand: cmd is a leakbench sign-off with the history and the
// baseline, every flag of it one leakbench defines.
func checkCommand(t *testing.T, cmd string, flags map[string]bool) {
	t.Helper()
	for _, want := range []string{"leakbench signoff", "--out out/signoff", "--history leakbench-history", "--baseline last"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("sign-off command %q lacks %q", cmd, want)
		}
	}
	for _, m := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(cmd, -1) {
		if !flags[m[1]] {
			t.Errorf("sign-off command uses --%s, which leakbench does not define", m[1])
		}
	}
}

type ghStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

func TestGitHubWorkflow(t *testing.T) {
	var wf struct {
		Name string `yaml:"name"`
		On   any    `yaml:"on"`
		Jobs map[string]struct {
			RunsOn string   `yaml:"runs-on"`
			Steps  []ghStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	load(t, "github-workflow.yml", &wf)
	job, ok := wf.Jobs["signoff"]
	if !ok || wf.On == nil || job.RunsOn == "" {
		t.Fatalf("no signoff job with a trigger and a runner: %+v", wf)
	}
	find := func(pred func(ghStep) bool) *ghStep {
		for i := range job.Steps {
			if pred(job.Steps[i]) {
				return &job.Steps[i]
			}
		}
		return nil
	}
	flags := leakbenchFlags(t)
	signoff := find(func(s ghStep) bool { return strings.Contains(s.Run, "leakbench signoff") })
	if signoff == nil {
		t.Fatal("no sign-off step")
	}
	checkCommand(t, signoff.Run, flags)
	if signoff.Env["LEAKBENCH_RELEASE"] == "" {
		t.Error("the sign-off step does not name the release")
	}
	if find(func(s ghStep) bool {
		return strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["fetch-depth"] == "0"
	}) == nil {
		t.Error("no checkout with the full history (git describe needs it)")
	}
	// The history survives between runs: restored before, saved after.
	restore := find(func(s ghStep) bool { return strings.HasPrefix(s.Uses, "actions/cache/restore@") })
	save := find(func(s ghStep) bool { return strings.HasPrefix(s.Uses, "actions/cache/save@") })
	if restore == nil || save == nil || restore.With["path"] != "leakbench-history" || save.With["path"] != "leakbench-history" {
		t.Errorf("history cache: restore %+v, save %+v", restore, save)
	} else if !strings.HasPrefix(save.If, "always()") {
		t.Error("the history is not saved when the sign-off fails (a regression must be recorded too)")
	}
	// The report is an artifact, also when the sign-off failed.
	upload := find(func(s ghStep) bool { return strings.HasPrefix(s.Uses, "actions/upload-artifact@") })
	if upload == nil || !strings.HasPrefix(upload.If, "always()") {
		t.Fatalf("no upload-artifact step that runs always: %+v", upload)
	}
	for _, p := range []string{"out/signoff/report.html", "out/signoff/junit.xml", "out/signoff/baseline.md", "out/trend/"} {
		if !strings.Contains(upload.With["path"], p) {
			t.Errorf("artifact paths lack %s", p)
		}
	}
	trend := find(func(s ghStep) bool {
		return strings.Contains(s.Run, "leakbench trend leakbench-history --out out/trend")
	})
	if trend == nil {
		t.Error("no trend step")
	}
	if find(func(s ghStep) bool { return strings.Contains(s.Run, `>> "$GITHUB_STEP_SUMMARY"`) }) == nil {
		t.Error("nothing goes to $GITHUB_STEP_SUMMARY")
	}
	// The sign-off comes after the cache restore and before the upload.
	idx := func(s *ghStep) int {
		for i := range job.Steps {
			if &job.Steps[i] == s {
				return i
			}
		}
		return -1
	}
	if !(idx(restore) < idx(signoff) && idx(signoff) < idx(save) && idx(signoff) < idx(upload)) {
		t.Error("steps out of order: restore, sign-off, then save and upload")
	}
}

func TestGitLabJob(t *testing.T) {
	var ci map[string]any
	load(t, "gitlab-ci.yml", &ci)
	var job struct {
		Stage     string            `yaml:"stage"`
		Variables map[string]string `yaml:"variables"`
		Cache     struct {
			Paths []string `yaml:"paths"`
		} `yaml:"cache"`
		Script      []string `yaml:"script"`
		AfterScript []string `yaml:"after_script"`
		Artifacts   struct {
			When    string   `yaml:"when"`
			Paths   []string `yaml:"paths"`
			Reports struct {
				JUnit []string `yaml:"junit"`
			} `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	raw, err := yaml.Marshal(ci["leakbench-signoff"])
	if err != nil || ci["leakbench-signoff"] == nil {
		t.Fatalf("no leakbench-signoff job: %v", err)
	}
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	checkCommand(t, strings.Join(job.Script, "\n"), leakbenchFlags(t))
	if job.Variables["LEAKBENCH_RELEASE"] == "" || job.Variables["GIT_DEPTH"] != "0" {
		t.Errorf("variables: %v", job.Variables)
	}
	if len(job.Cache.Paths) != 1 || strings.TrimSuffix(job.Cache.Paths[0], "/") != "leakbench-history" {
		t.Errorf("cache paths %v, want the history", job.Cache.Paths)
	}
	if job.Artifacts.When != "always" {
		t.Errorf("artifacts when %q, want always (a failed sign-off's report matters most)", job.Artifacts.When)
	}
	want := map[string]bool{"out/signoff/junit.xml": false, "out/signoff/baseline-junit.xml": false}
	for _, p := range job.Artifacts.Reports.JUnit {
		if _, ok := want[p]; ok {
			want[p] = true
		}
	}
	for p, ok := range want {
		if !ok {
			t.Errorf("junit reports lack %s", p)
		}
	}
	if !strings.Contains(strings.Join(job.AfterScript, "\n"), "leakbench trend leakbench-history --out out/trend") {
		t.Error("no trend in after_script")
	}
	stages, _ := ci["stages"].([]any)
	found := false
	for _, s := range stages {
		found = found || s == job.Stage
	}
	if !found {
		t.Errorf("stage %q not in stages %v", job.Stage, stages)
	}
}

// TestGitHubShards: the matrix workflow plays N shards from one start and
// merges exactly those N, with flags leakbench defines.
func TestGitHubShards(t *testing.T) {
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Needs    any    `yaml:"needs"`
			If       string `yaml:"if"`
			Strategy struct {
				FailFast *bool `yaml:"fail-fast"`
				Matrix   struct {
					Shard []int `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []ghStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	load(t, "github-shards.yml", &wf)
	shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
	n := len(shard.Strategy.Matrix.Shard)
	if n < 2 || wf.Env["SHARDS"] != strconv.Itoa(n) {
		t.Fatalf("matrix %v, SHARDS %q", shard.Strategy.Matrix.Shard, wf.Env["SHARDS"])
	}
	for i, s := range shard.Strategy.Matrix.Shard {
		if s != i {
			t.Errorf("matrix shard %d is %d: want 0..N-1", i, s)
		}
	}
	if shard.Strategy.FailFast == nil || *shard.Strategy.FailFast || merge.If != "always()" || merge.Needs != "shard" {
		t.Errorf("a failed shard must not cancel the others, and the merge must run after all: fail-fast %v, merge if %q needs %v",
			shard.Strategy.FailFast, merge.If, merge.Needs)
	}
	flags := leakbenchFlags(t)
	run := func(steps []ghStep, cmd string) string {
		for _, s := range steps {
			if strings.Contains(s.Run, "bin/leakbench "+cmd) {
				for _, m := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(s.Run, -1) {
					if !flags[m[1]] {
						t.Errorf("%s uses --%s, which leakbench does not define", cmd, m[1])
					}
				}
				return s.Run
			}
		}
		t.Fatalf("no leakbench %s step", cmd)
		return ""
	}
	r := run(shard.Steps, "run")
	for _, want := range []string{"--shard ${{ matrix.shard }}/${{ env.SHARDS }}", "--start-at ${{ needs.start.outputs.at }}", "--out out/shard-${{ matrix.shard }}"} {
		if !strings.Contains(r, want) {
			t.Errorf("shard step %q lacks %q", r, want)
		}
	}
	m := run(merge.Steps, "merge")
	for i := range n {
		if !strings.Contains(m, fmt.Sprintf("out/shard-%d", i)) {
			t.Errorf("merge step %q lacks shard %d", m, i)
		}
	}
	if !strings.Contains(m, "--shards ${{ env.SHARDS }}") {
		t.Errorf("merge step %q does not say how many shards there are", m)
	}
}

// TestNightlyE2ELong: the nightly example runs make e2e-long on a
// schedule, after installing what it needs, within a job timeout above
// the target's own test timeout, and keeps its log even when it fails;
// the target it runs plays the incident test.
func TestNightlyE2ELong(t *testing.T) {
	var wf struct {
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			Timeout int      `yaml:"timeout-minutes"`
			Steps   []ghStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	load(t, "nightly-e2e-long.yml", &wf)
	if _, ok := wf.On["schedule"]; !ok {
		t.Error("the nightly example has no schedule")
	}
	job, ok := wf.Jobs["e2e-long"]
	if !ok {
		t.Fatalf("no e2e-long job: %+v", wf)
	}
	deps, run, upload := -1, -1, -1
	for i, s := range job.Steps {
		switch {
		case strings.Contains(s.Run, "make deps"):
			deps = i
		case strings.Contains(s.Run, "make e2e-long"):
			run = i
			if !strings.Contains(s.Run, "pipefail") {
				t.Error("make e2e-long is piped to tee without pipefail: a failure would pass")
			}
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@") && strings.HasPrefix(s.If, "always()"):
			upload = i
		}
	}
	if !(deps >= 0 && deps < run && run < upload) {
		t.Errorf("steps: make deps at %d, make e2e-long at %d, an upload that always runs at %d; want them in that order", deps, run, upload)
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^e2e-long:.*\n\t.*-timeout (\d+)m .*-run '\^TestE2ELong'.*\./internal/app/runner/`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile's e2e-long target does not run the runner's TestE2ELong tests (the incident sign-off) with a timeout")
	}
	if limit, _ := strconv.Atoi(string(m[1])); job.Timeout <= limit {
		t.Errorf("job timeout %d minutes, not above make e2e-long's own %d", job.Timeout, limit)
	}
}

package githubaction

import (
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// checkExample: the example workflow parses; every job has PostgreSQL;
// the action is given declared inputs, its required ones, the probe DSN
// from a secret and a baseline restored (from the cache or an artifact)
// before it; the outputs it reads are the action's.
func checkExample(t *testing.T, a *action) {
	t.Helper()
	text := readFile(t, exampleWF)
	var wf struct {
		Jobs map[string]struct {
			Services map[string]any `yaml:"services"`
			Steps    []step         `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		t.Fatalf("%s: %v", exampleWF, err)
	}
	found := false
	for name, job := range wf.Jobs {
		if _, ok := job.Services["postgres"]; !ok {
			t.Errorf("%s: job %s has no postgres service", exampleWF, name)
		}
		restored := map[string]bool{}
		for _, st := range job.Steps {
			if strings.HasPrefix(st.Uses, "actions/cache/restore@") || strings.HasPrefix(st.Uses, "actions/download-artifact@") {
				restored[st.With["path"]] = true
			}
			if !strings.HasPrefix(st.Uses, "leakbench/leakbench@") {
				continue
			}
			found = true
			for k := range st.With {
				if _, ok := a.Inputs[k]; !ok {
					t.Errorf("%s: the action is given %s, which it does not declare", exampleWF, k)
				}
			}
			for k, in := range a.Inputs {
				if _, ok := st.With[k]; in.Required && !ok {
					t.Errorf("%s: the required input %s is not given", exampleWF, k)
				}
			}
			if st.With["probe-dsn"] != "${{ secrets.LEAKBENCH_PROBE_DSN }}" {
				t.Errorf("%s: probe-dsn is %q, want the secret LEAKBENCH_PROBE_DSN", exampleWF, st.With["probe-dsn"])
			}
			if b := st.With["baseline"]; b == "" || !restored[b] {
				t.Errorf("%s: the baseline %q is not restored (from the cache or an artifact) before the action", exampleWF, b)
			}
		}
	}
	if !found {
		t.Fatalf("%s: no step uses leakbench/leakbench@…", exampleWF)
	}
	for _, m := range regexp.MustCompile(`steps\.leakbench\.outputs\.([a-z-]+)`).FindAllStringSubmatch(text, -1) {
		if _, ok := a.Outputs[m[1]]; !ok {
			t.Errorf("%s reads the output %s, which the action does not declare", exampleWF, m[1])
		}
	}
}

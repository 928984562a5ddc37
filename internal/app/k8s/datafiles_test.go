package k8s_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/leakbench/leakbench/internal/app/k8s"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// loadWithData writes scen and files (by path relative to the scenario's
// folder) into a new folder and loads the scenario from there, as
// leakbench k8s does.
func loadWithData(t *testing.T, scen string, files map[string]string) *plan.Plan {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scenario") // room for "../x" beside it
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "leakbench.yaml")
	if err := os.WriteFile(path, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenariofile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// scenarioVolume is the shard pod's volume at /scenario.
func scenarioVolume(t *testing.T, docs []string) (*corev1.Volume, []corev1.VolumeMount) {
	t.Helper()
	var shards batchv1.Job
	decodeStrict(t, docs[len(docs)-2], &shards)
	pod := shards.Spec.Template.Spec
	for i, v := range pod.Volumes {
		if v.Name == "scenario" {
			return &pod.Volumes[i], pod.Containers[0].VolumeMounts
		}
	}
	t.Fatalf("no scenario volume in %+v", pod.Volumes)
	return nil, nil
}

// TestRenderCarriesDataFiles: a plan's data files go into a ConfigMap of
// their own, as the bytes read here, and the shards' pods see them beside
// the scenario at the paths the scenario gives (a projected volume of the
// scenario's ConfigMap, or Secret, and the data): the scenario runs there
// unchanged.
func TestRenderCarriesDataFiles(t *testing.T) {
	const users = "email\na@example.com\nb@example.com\n"
	const agents = `[{"name": "x"}]`
	scen := "data: users.csv\nscenarios:\n" +
		"  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n" +
		"  b: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping], data: {file: rows/agents.json, mode: random}}\n"
	p := loadWithData(t, scen, map[string]string{"users.csv": users, "rows/agents.json": agents})
	files, err := k8s.ReadDataFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || string(files["users.csv"]) != users || string(files["rows/agents.json"]) != agents {
		t.Fatalf("read %q, want users.csv and rows/agents.json as written", files)
	}
	for _, secret := range []string{"", "my-scenario"} {
		t.Run("secret="+secret, func(t *testing.T) {
			docs := render(t, k8s.Options{Name: "d", Shards: 2, Scenario: []byte(scen), Plan: p, DataFiles: files,
				Target: "http://gw:8080/mcp", Image: "lb", StartAt: time.Now(), ScenarioSecret: secret})
			want := 5 // scenario ConfigMap, data ConfigMap, PVC, 2 Jobs
			if secret != "" {
				want = 4
			}
			if len(docs) != want {
				t.Fatalf("%d documents, want %d", len(docs), want)
			}
			var cm corev1.ConfigMap
			decodeStrict(t, docs[want-4], &cm)
			if cm.Name != "d-data" || len(cm.Data) != 0 || len(cm.BinaryData) != 2 {
				t.Fatalf("data ConfigMap %s: data %q, binaryData %q", cm.Name, cm.Data, cm.BinaryData)
			}
			vol, mounts := scenarioVolume(t, docs)
			if vol.Projected == nil || len(vol.Projected.Sources) != 2 || vol.ConfigMap != nil || vol.Secret != nil {
				t.Fatalf("scenario volume %+v, want the scenario and the data projected together", vol)
			}
			scenSrc, dataSrc := vol.Projected.Sources[0], vol.Projected.Sources[1]
			if secret == "" && (scenSrc.ConfigMap == nil || scenSrc.ConfigMap.Name != "d-scenario") ||
				secret != "" && (scenSrc.Secret == nil || scenSrc.Secret.Name != secret) {
				t.Errorf("scenario source %+v, want ConfigMap d-scenario or Secret %q", scenSrc, secret)
			}
			if dataSrc.ConfigMap == nil || dataSrc.ConfigMap.Name != "d-data" || len(dataSrc.ConfigMap.Items) != 2 {
				t.Fatalf("data source %+v", dataSrc)
			}
			// Each file at its path, with the bytes read here.
			got := map[string]string{}
			for _, it := range dataSrc.ConfigMap.Items {
				got[it.Path] = string(cm.BinaryData[it.Key])
			}
			if got["users.csv"] != users || got["rows/agents.json"] != agents {
				t.Errorf("the pods would see %q", got)
			}
			mounted := false
			for _, m := range mounts {
				mounted = mounted || m.Name == "scenario" && m.MountPath == k8s.ScenarioDir
			}
			if !mounted {
				t.Errorf("scenario volume not mounted at %s: %+v", k8s.ScenarioDir, mounts)
			}
		})
	}
}

// TestRenderRefusesDataOutsideTheFolder: a data file the pods could not
// find beside the scenario (an absolute path, or one through ".."), one
// whose content was not given, or data too large for a ConfigMap is
// refused, with the file named and what to do; nothing is written.
func TestRenderRefusesDataOutsideTheFolder(t *testing.T) {
	const flow = "scenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n"
	outside := filepath.Join(t.TempDir(), "abs.csv")
	if err := os.WriteFile(outside, []byte("email\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := "email\n" + strings.Repeat("someone@example.com\n", 60000) // > 1 MiB
	for _, tc := range []struct {
		name, data string
		files      map[string]string
		given      bool
		want       string
	}{
		{"absolute", outside, nil, true, "data file " + outside + ": the pods find data files beside the scenario"},
		{"parent", "../up.csv", map[string]string{"../up.csv": "email\nx\n"}, true, "give a path relative to the scenario's folder and inside it"},
		{"not given", "users.csv", map[string]string{"users.csv": "email\nx\n"}, false, "data file users.csv: its content was not given"},
		{"too large", "big.csv", map[string]string{"big.csv": big}, true, "a ConfigMap holds at most 1048576 (1 MiB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scen := "data: " + tc.data + "\n" + flow
			p := loadWithData(t, scen, tc.files)
			var data map[string][]byte
			if tc.given {
				var err error
				if data, err = k8s.ReadDataFiles(p); err != nil {
					t.Fatal(err)
				}
			}
			var buf bytes.Buffer
			err := k8s.Render(&buf, k8s.Options{Shards: 1, Scenario: []byte(scen), Plan: p, DataFiles: data,
				Target: "http://gw/mcp", Image: "lb", StartAt: time.Now()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written with the refusal", buf.Len())
			}
		})
	}
	// Without data files, nothing changes: the scenario's ConfigMap alone.
	docs := render(t, k8s.Options{Shards: 1, Scenario: []byte(flow), Target: "http://gw/mcp", Image: "lb", StartAt: time.Now()})
	if vol, _ := scenarioVolume(t, docs); vol.ConfigMap == nil || vol.Projected != nil || len(docs) != 4 {
		t.Errorf("%d documents, scenario volume %+v; want 4 and the ConfigMap alone", len(docs), vol)
	}
}

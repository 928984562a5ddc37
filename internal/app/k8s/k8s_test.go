package k8s_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/leakbench/leakbench/internal/app/k8s"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

const scenario = `scenarios:
  agents: {executor: constant-vus, vus: 300, duration: 30m, flow: [ping, {think: 1s}]}
thresholds:
  mcp_req_duration: ["p(95)<500"]
`

// decodeStrict decodes one manifest into v, unknown fields being errors.
func decodeStrict(t *testing.T, doc string, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, doc)
	}
}

func render(t *testing.T, o k8s.Options) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := k8s.Render(&buf, o); err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?m)^---\n`).Split(buf.String(), -1)
}

func TestRender(t *testing.T) {
	start := time.Now().Add(3 * time.Minute).UTC().Truncate(time.Second)
	for _, n := range []int{1, 4, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			docs := render(t, k8s.Options{Name: "mcp-load", Namespace: "perf", Shards: n, Scenario: []byte(scenario),
				Target: "https://gw.example.com/mcp", Image: "registry.example.com/leakbench/gateway:abc", StartAt: start,
				StorageClass: "nfs", TokensSecret: "mcp-tokens", RunArgs: []string{"--insecure-skip-verify"}})
			if len(docs) != 4 {
				t.Fatalf("%d documents, want ConfigMap, PVC, 2 Jobs", len(docs))
			}
			var cm corev1.ConfigMap
			decodeStrict(t, docs[0], &cm)
			if cm.Kind != "ConfigMap" || cm.Name != "mcp-load-scenario" || cm.Namespace != "perf" || cm.Data["scenario.yaml"] != scenario {
				t.Errorf("configmap %+v", cm)
			}
			if _, err := scenariofile.Parse([]byte(cm.Data["scenario.yaml"]), "scenario.yaml"); err != nil {
				t.Errorf("the ConfigMap's scenario does not parse: %v", err)
			}
			var pvc corev1.PersistentVolumeClaim
			decodeStrict(t, docs[1], &pvc)
			if pvc.Kind != "PersistentVolumeClaim" || pvc.Name != "mcp-load-results" || !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) ||
				pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "nfs" || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
				t.Errorf("pvc %+v", pvc)
			}

			var shards batchv1.Job
			decodeStrict(t, docs[2], &shards)
			s := shards.Spec
			if shards.Kind != "Job" || shards.APIVersion != "batch/v1" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
				s.Completions == nil || *s.Completions != int32(n) || s.Parallelism == nil || *s.Parallelism != int32(n) ||
				s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds < int64((30*time.Minute).Seconds()) {
				t.Errorf("shard job spec %+v", s)
			}
			pod := s.Template.Spec
			if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
				t.Fatalf("pod %+v", pod)
			}
			c := pod.Containers[0]
			args := strings.Join(c.Args, " ")
			for _, want := range []string{"run --target https://gw.example.com/mcp", "--scenario /scenario/scenario.yaml",
				fmt.Sprintf("--shard $(JOB_COMPLETION_INDEX)/%d", n), "--start-at " + start.Format(time.RFC3339),
				"--out /results/shard-$(JOB_COMPLETION_INDEX)", "--tokens-file /tokens/tokens", "--insecure-skip-verify"} {
				if !strings.Contains(args, want) {
					t.Errorf("shard args %q lack %q", args, want)
				}
			}
			if c.Image != "registry.example.com/leakbench/gateway:abc" || len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" ||
				c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
				t.Errorf("container %+v", c)
			}
			if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem ||
				pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
				t.Errorf("security contexts: pod %+v container %+v", pod.SecurityContext, c.SecurityContext)
			}
			vols := map[string]corev1.Volume{}
			for _, v := range pod.Volumes {
				vols[v.Name] = v
			}
			if v := vols["results"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "mcp-load-results" {
				t.Errorf("results volume %+v", v)
			}
			if v := vols["scenario"]; v.ConfigMap == nil || v.ConfigMap.Name != "mcp-load-scenario" {
				t.Errorf("scenario volume %+v", v)
			}
			if v := vols["tokens"]; v.Secret == nil || v.Secret.SecretName != "mcp-tokens" {
				t.Errorf("tokens volume %+v", v)
			}

			var merge batchv1.Job
			decodeStrict(t, docs[3], &merge)
			m := merge.Spec
			if merge.Name != "mcp-load-merge" || m.CompletionMode != nil || *m.Completions != 1 || *m.ActiveDeadlineSeconds <= *s.ActiveDeadlineSeconds {
				t.Errorf("merge job %+v", m)
			}
			margs := m.Template.Spec.Containers[0].Args
			if margs[0] != "merge" || !slices.Contains(margs, "/results/merged") || !slices.Contains(margs, fmt.Sprint(n)) ||
				!slices.Contains(margs, "/results/shard-0") || !slices.Contains(margs, fmt.Sprintf("/results/shard-%d", n-1)) || slices.Contains(margs, fmt.Sprintf("/results/shard-%d", n)) {
				t.Errorf("merge args %q", margs)
			}
			if i := slices.Index(margs, "--wait"); i < 0 || mustDuration(t, margs[i+1]) < 30*time.Minute {
				t.Errorf("merge --wait in %q", margs)
			}
		})
	}
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRenderOwnClaim(t *testing.T) {
	docs := render(t, k8s.Options{Shards: 2, Scenario: []byte(scenario), Target: "http://gw:8080/mcp", Image: "lb", StartAt: time.Now(), PVC: "shared"})
	if len(docs) != 3 {
		t.Fatalf("%d documents, want ConfigMap and 2 Jobs", len(docs))
	}
	var j batchv1.Job
	decodeStrict(t, docs[1], &j)
	if j.Name != "leakbench-shards" || j.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "shared" {
		t.Errorf("job %s, volumes %+v", j.Name, j.Spec.Template.Spec.Volumes)
	}
}

func TestRenderBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    k8s.Options
		want string
	}{
		{"no image", k8s.Options{Shards: 2, Scenario: []byte(scenario), Target: "http://x/mcp", StartAt: time.Now()}, "image"},
		{"zero shards", k8s.Options{Scenario: []byte(scenario), Target: "http://x/mcp", Image: "i", StartAt: time.Now()}, "shards"},
		{"bad name", k8s.Options{Name: "Big_Name", Shards: 1, Scenario: []byte(scenario), Target: "http://x/mcp", Image: "i", StartAt: time.Now()}, "DNS label"},
		{"bad scenario", k8s.Options{Shards: 1, Scenario: []byte("scenarios: {a: {executor: nope}}"), Target: "http://x/mcp", Image: "i", StartAt: time.Now()}, "scenario"},
	} {
		err := k8s.Render(&bytes.Buffer{}, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.want)
		}
	}
}

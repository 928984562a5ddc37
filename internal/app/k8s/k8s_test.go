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

// TestRenderRefusesSecrets: no secret goes into the manifests, which
// kubectl get and describe print to whoever may read the namespace: a
// scenario's inline tokens and credential-like headers (its ConfigMap),
// and a --target or --run-arg that carries a password, a token or a
// secret query parameter (the Job's args). Each refusal says how to pass
// the secret instead, and never quotes it.
func TestRenderRefusesSecrets(t *testing.T) {
	const flow = "scenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n"
	base := func(scen string) k8s.Options {
		return k8s.Options{Shards: 2, Scenario: []byte(scen), Target: "https://gw.example.com/mcp", Image: "lb", StartAt: time.Now()}
	}
	for _, tc := range []struct {
		name   string
		o      k8s.Options
		secret string
		want   []string
	}{
		{"inline tokens", base("tokens: [lbt_0123456789abcdef, lbt_fedcba9876543210]\n" + flow), "lbt_0123456789abcdef",
			[]string{"tokens", "--tokens-secret", "kubectl create secret generic"}},
		{"credential header", base("headers: {X-Api-Key: k3y-s3cret, X-Team: blue}\n" + flow), "k3y-s3cret",
			[]string{"X-Api-Key", "ConfigMap"}},
		{"credential header of an http step", base("scenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [{http: {url: /api, headers: {Cookie: sid=c00kie}}}]}\n"), "c00kie",
			[]string{"Cookie", "scenarios.a"}},
		{"password in the scenario's target", base("target: https://ci:hunter2@gw.example.com/mcp\n" + flow), "hunter2",
			[]string{"target"}},
		{"password in --target", func() k8s.Options { o := base(flow); o.Target = "https://ci:hunter2@gw.example.com/mcp"; return o }(), "hunter2",
			[]string{"--target", "--tokens-secret"}},
		{"secret query parameter in --target", func() k8s.Options { o := base(flow); o.Target = "https://gw.example.com/mcp?api_key=qu3ry"; return o }(), "qu3ry",
			[]string{"--target", "api_key"}},
		{"DSN with a password in --run-arg", func() k8s.Options {
			o := base(flow)
			o.RunArgs = []string{"--probe-dsn=postgres://mon:pgpw@db:5432/app"}
			return o
		}(), "pgpw", []string{"--run-arg", "LEAKBENCH_PROBE_DSN"}},
		{"DSN as the next --run-arg", func() k8s.Options {
			o := base(flow)
			o.RunArgs = []string{"--probe-dsn", "host=db user=mon password=pgpw"}
			return o
		}(), "pgpw", []string{"--run-arg", "LEAKBENCH_PROBE_DSN"}},
		{"OAuth client secret in --run-arg", func() k8s.Options {
			o := base(flow)
			o.RunArgs = []string{"--oauth-token-url=https://idp/token", "--oauth-client-secret=0auth"}
			return o
		}(), "0auth", []string{"--run-arg", "LEAKBENCH_OAUTH_CLIENT_SECRET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := k8s.Render(&buf, tc.o)
			if err == nil {
				t.Fatalf("rendered, with the secret in the output: %v", strings.Contains(buf.String(), tc.secret))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tc.secret) || buf.Len() > 0 {
				t.Errorf("the secret is quoted (%v) or something was written (%d bytes): %v", strings.Contains(err.Error(), tc.secret), buf.Len(), err)
			}
		})
	}
	// What is no secret renders: a DSN without a password, plain headers.
	o := base("headers: {X-Team: blue}\n" + flow)
	o.RunArgs = []string{"--probe-dsn=postgres://mon@db:5432/app", "--insecure-skip-verify"}
	if err := k8s.Render(&bytes.Buffer{}, o); err != nil {
		t.Errorf("no secret: %v", err)
	}
}

// TestRenderFromSecrets: a scenario with credentials is mounted from the
// user's Secret (no ConfigMap is rendered), and run's secret flags come
// from a Secret as the shards' environment; nothing secret is printed.
func TestRenderFromSecrets(t *testing.T) {
	scen := "tokens: [lbt_0123456789abcdef]\nheaders: {X-Api-Key: k3y-s3cret}\n" +
		"scenarios:\n  a: {executor: constant-vus, vus: 2, duration: 10s, flow: [ping]}\n"
	var buf bytes.Buffer
	err := k8s.Render(&buf, k8s.Options{Name: "sec", Shards: 2, Scenario: []byte(scen), Target: "https://gw.example.com/mcp", Image: "lb",
		StartAt: time.Now(), ScenarioSecret: "sec-scenario", EnvSecret: "sec-env", RunArgs: []string{"--oauth-token-url=https://idp/token"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"lbt_0123456789abcdef", "k3y-s3cret", "ConfigMap"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("the manifests hold %q:\n%s", s, buf.String())
		}
	}
	docs := regexp.MustCompile(`(?m)^---\n`).Split(buf.String(), -1)
	if len(docs) != 3 {
		t.Fatalf("%d documents, want PVC and 2 Jobs", len(docs))
	}
	var shards batchv1.Job
	decodeStrict(t, docs[1], &shards)
	pod := shards.Spec.Template.Spec
	var scenVol *corev1.Volume
	for i, v := range pod.Volumes {
		if v.Name == "scenario" {
			scenVol = &pod.Volumes[i]
		}
	}
	if scenVol == nil || scenVol.Secret == nil || scenVol.Secret.SecretName != "sec-scenario" || scenVol.ConfigMap != nil {
		t.Errorf("scenario volume %+v, want the Secret sec-scenario", scenVol)
	}
	c := pod.Containers[0]
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "sec-env" {
		t.Errorf("envFrom %+v, want the Secret sec-env", c.EnvFrom)
	}
	var merge batchv1.Job
	decodeStrict(t, docs[2], &merge)
	if len(merge.Spec.Template.Spec.Containers[0].EnvFrom) != 0 {
		t.Errorf("the merge gets the shards' secrets: %+v", merge.Spec.Template.Spec.Containers[0].EnvFrom)
	}
	if err := k8s.Render(&bytes.Buffer{}, k8s.Options{Shards: 1, Scenario: []byte(scen), Target: "http://x/mcp", Image: "i", StartAt: time.Now(),
		ScenarioSecret: "Bad_Name"}); err == nil || !strings.Contains(err.Error(), "--scenario-secret") {
		t.Errorf("a bad Secret name: %v", err)
	}
}

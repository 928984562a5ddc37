// Package k8s renders what `kubectl apply` needs to play a scenario from
// many machines: an Indexed Job whose pods each play one shard
// (leakbench run --shard $(JOB_COMPLETION_INDEX)/N, all starting at one
// --start-at), a ConfigMap with the scenario, a PersistentVolumeClaim the
// shards write their run directories to (or the user's own), and a second
// Job that waits for them and merges them (leakbench merge). Nothing else
// runs in the cluster: Kubernetes schedules, restarts and reports; the
// shards' results merge exactly (package merge).
//
// The image is the static leakbench binary FROM scratch that leakbench
// images builds (fixtures/images, leakbench.Dockerfile), pushed to a
// registry the cluster pulls from.
//
//	var buf bytes.Buffer
//	err := k8s.Render(&buf, k8s.Options{Name: "mcp-load", Shards: 10, Scenario: raw, Target: url, Image: img, StartAt: t})
package k8s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// Paths inside the pods.
const (
	ScenarioDir  = "/scenario"
	ScenarioFile = "scenario.yaml"
	ResultsDir   = "/results"
	TokensDir    = "/tokens"
	MergedDir    = "merged"
	// IndexEnv is the variable the Job controller sets to the pod's index.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// IndexAnnotation is the pod annotation that holds the same index.
	IndexAnnotation = "batch.kubernetes.io/job-completion-index"
)

// nonRootUser is the image's user (nobody), also the volume's group.
const nonRootUser = 65534

// Options says what to render.
type Options struct {
	// Name prefixes every object (a DNS label: lowercase, digits, '-').
	Name      string
	Namespace string // "": kubectl's current namespace
	// Shards is N: parallelism = completions = N.
	Shards int
	// Scenario is the scenario (or profile) file's content; Plan is it
	// parsed (nil: Scenario parsed as a plain scenario file). A
	// tokensFile it names is not carried: give tokens with TokensSecret.
	Scenario []byte
	Plan     *plan.Plan
	// DataFiles are the contents of the plan's data files by their paths
	// as the scenario writes them (ReadDataFiles): they go into a
	// ConfigMap and appear beside the scenario in the pods (datafiles.go).
	DataFiles map[string][]byte
	// Target is the MCP endpoint the shards load.
	Target string
	// Image is the leakbench image (leakbench images, pushed).
	Image string
	// StartAt is the shards' common start (--start-at); render right
	// before applying, leaving time to pull the image.
	StartAt time.Time
	// PVC names an existing ReadWriteMany claim for the results; "":
	// render one, <Name>-results, of StorageSize (default 1Gi) in
	// StorageClass ("": the cluster's default).
	PVC          string
	StorageClass string
	StorageSize  string
	// TokensSecret names a Secret whose key "tokens" holds the bearer
	// tokens, one a line (--tokens-file); "": none.
	TokensSecret string
	// ScenarioSecret names a Secret whose key "scenario.yaml" holds the
	// scenario, mounted instead of the ConfigMap (none is rendered): for a
	// scenario with inline tokens or credential headers, which are never
	// printed into a manifest. "": the ConfigMap.
	ScenarioSecret string
	// EnvSecret names a Secret whose keys become every shard's environment
	// (envFrom): the secrets of leakbench run's flags, which it reads from
	// LEAKBENCH_PROBE_DSN, LEAKBENCH_OAUTH_CLIENT_SECRET and their kin.
	// "": none.
	EnvSecret string
	// RunArgs are more flags for every shard's leakbench run. None may
	// carry a secret (it would be printed into the Job): Render refuses
	// them, and EnvSecret carries them.
	RunArgs []string
}

// Job and object names.
func (o Options) shardJob() string  { return o.Name + "-shards" }
func (o Options) mergeJob() string  { return o.Name + "-merge" }
func (o Options) configMap() string { return o.Name + "-scenario" }
func (o Options) claim() string {
	if o.PVC != "" {
		return o.PVC
	}
	return o.Name + "-results"
}

// ShardDir is shard i's run directory in the results volume.
func ShardDir(i int) string { return ResultsDir + "/shard-" + strconv.Itoa(i) }

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
)

func (o *Options) check() (time.Duration, error) {
	var errs []error
	if o.Name == "" {
		o.Name = "leakbench"
	}
	if !dnsLabel.MatchString(o.Name) || len(o.Name) > 40 {
		errs = append(errs, fmt.Errorf("name %q: want a DNS label of at most 40 characters (lowercase letters, digits, '-')", o.Name))
	}
	if o.Namespace != "" && !dnsLabel.MatchString(o.Namespace) {
		errs = append(errs, fmt.Errorf("namespace %q is not a DNS label", o.Namespace))
	}
	for _, sec := range []struct{ flag, name string }{{"tokens-secret", o.TokensSecret}, {"scenario-secret", o.ScenarioSecret}, {"env-secret", o.EnvSecret}} {
		if sec.name != "" && (!dnsSubdomain.MatchString(sec.name) || len(sec.name) > 253) {
			errs = append(errs, fmt.Errorf("--%s %q is not a Secret's name (lowercase letters, digits, '-' and '.')", sec.flag, sec.name))
		}
	}
	if o.Shards < 1 || o.Shards > plan.MaxShards {
		errs = append(errs, fmt.Errorf("shards: want 1 to %d (got %d)", plan.MaxShards, o.Shards))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("no image: build it with leakbench images, push it to a registry the cluster pulls from, and give its name"))
	}
	if o.Target == "" {
		errs = append(errs, errors.New("no target URL"))
	}
	if o.StartAt.IsZero() {
		errs = append(errs, errors.New("no start time"))
	}
	if o.StorageSize == "" {
		o.StorageSize = "1Gi"
	}
	p := o.Plan
	if p == nil {
		var err error
		if p, err = scenariofile.Parse(o.Scenario, ScenarioFile); err != nil {
			return 0, errors.Join(append(errs, fmt.Errorf("scenario: %w", err))...)
		}
	}
	cp, err := plan.Compile(p)
	if err != nil {
		return 0, errors.Join(append(errs, fmt.Errorf("scenario: %w", err))...)
	}
	errs = append(errs, o.checkSecrets(p)...) // secrets.go
	errs = append(errs, o.checkData(p)...)    // datafiles.go
	// How long the load can last: the latest scenario end plus its
	// gracefulStop.
	var length time.Duration
	for _, cs := range cp.Scenarios {
		length = max(length, cs.StartTime.D()+cs.Length+cs.GracefulStop.D())
	}
	return length, errors.Join(errs...)
}

// Render writes the manifests, YAML documents separated by "---": the
// ConfigMap (unless o.ScenarioSecret), the data files' ConfigMap (when the
// plan has data files), the PersistentVolumeClaim (unless o.PVC), the
// shards' Indexed Job and the merge Job. It refuses a secret
// that would be printed into them — the scenario's inline tokens or
// credential headers, a --target or run argument that carries one — naming
// the Secret that carries it instead (secrets.go). Each Job has an activeDeadlineSeconds, so that
// nothing waits forever: the shards get the load's length plus 10 minutes
// (image pulls, the preflight) after the start time; the merge waits for
// them as long and then merges what is there, naming the rest.
func Render(w io.Writer, o Options) error {
	length, err := o.check()
	if err != nil {
		return err
	}
	lead := max(time.Until(o.StartAt), 0)
	deadline := int64((lead + length + 10*time.Minute).Seconds())
	var docs []any
	if o.ScenarioSecret == "" {
		docs = append(docs, o.configMapManifest())
	}
	if len(o.DataFiles) > 0 {
		docs = append(docs, o.dataConfigMapManifest())
	}
	if o.PVC == "" {
		docs = append(docs, o.claimManifest())
	}
	docs = append(docs, o.shardJobManifest(deadline), o.mergeJobManifest(deadline, lead+length+10*time.Minute))
	for i, d := range docs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if err := writeYAML(w, d); err != nil {
			return err
		}
	}
	return nil
}

// writeYAML writes v as YAML in its JSON fields' order: through JSON,
// which YAML reads, keeping the key order of the structs.
func writeYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return err
	}
	clearStyle(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// clearStyle drops JSON's flow style and quotes, so the output reads as
// block YAML; strings that need quotes get them from the encoder.
func clearStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "\n") {
		n.Style = yaml.LiteralStyle
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}

// The manifests, as the fields of the Kubernetes API objects they are
// (k8s.io/api decodes them strictly in the tests).

type meta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   meta   `json:"metadata"`
	Data       any    `json:"data,omitempty"`
	BinaryData any    `json:"binaryData,omitempty"`
	Spec       any    `json:"spec,omitempty"`
}

func (o Options) meta(name, component string) meta {
	return meta{Name: name, Namespace: o.Namespace, Labels: map[string]string{
		"app.kubernetes.io/name": "leakbench", "app.kubernetes.io/instance": o.Name, "app.kubernetes.io/component": component}}
}

func (o Options) configMapManifest() object {
	return object{APIVersion: "v1", Kind: "ConfigMap", Metadata: o.meta(o.configMap(), "scenario"),
		Data: map[string]string{ScenarioFile: string(o.Scenario)}}
}

func (o Options) claimManifest() object {
	spec := map[string]any{
		"accessModes": []string{"ReadWriteMany"}, // every shard's pod writes, wherever it runs
		"resources":   map[string]any{"requests": map[string]string{"storage": o.StorageSize}},
	}
	if o.StorageClass != "" {
		spec["storageClassName"] = o.StorageClass
	}
	return object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: o.meta(o.claim(), "results"), Spec: spec}
}

type jobSpec struct {
	CompletionMode          string  `json:"completionMode,omitempty"`
	Completions             int     `json:"completions"`
	Parallelism             int     `json:"parallelism"`
	BackoffLimit            int     `json:"backoffLimit"`
	ActiveDeadlineSeconds   int64   `json:"activeDeadlineSeconds"`
	TTLSecondsAfterFinished *int    `json:"ttlSecondsAfterFinished,omitempty"`
	Template                podTmpl `json:"template"`
}

type podTmpl struct {
	Metadata meta    `json:"metadata"`
	Spec     podSpec `json:"spec"`
}

type podSpec struct {
	RestartPolicy   string         `json:"restartPolicy"`
	SecurityContext map[string]any `json:"securityContext"`
	Containers      []container    `json:"containers"`
	Volumes         []any          `json:"volumes"`
}

type container struct {
	Name            string         `json:"name"`
	Image           string         `json:"image"`
	Args            []string       `json:"args"`
	Env             []any          `json:"env,omitempty"`
	EnvFrom         []any          `json:"envFrom,omitempty"`
	VolumeMounts    []any          `json:"volumeMounts"`
	SecurityContext map[string]any `json:"securityContext"`
}

func (o Options) pod(component string, args []string, env []any, withScenario bool) podTmpl {
	var envFrom []any
	if withScenario && o.EnvSecret != "" {
		envFrom = []any{map[string]any{"secretRef": map[string]any{"name": o.EnvSecret}}}
	}
	// The root file system is read-only; /tmp is the pod's own.
	mounts := []any{map[string]any{"name": "results", "mountPath": ResultsDir}, map[string]any{"name": "tmp", "mountPath": "/tmp"}}
	vols := []any{map[string]any{"name": "results", "persistentVolumeClaim": map[string]any{"claimName": o.claim()}},
		map[string]any{"name": "tmp", "emptyDir": map[string]any{}}}
	if withScenario {
		mounts = append(mounts, map[string]any{"name": "scenario", "mountPath": ScenarioDir, "readOnly": true})
		vols = append(vols, o.scenarioVolume())
		if o.TokensSecret != "" {
			mounts = append(mounts, map[string]any{"name": "tokens", "mountPath": TokensDir, "readOnly": true})
			vols = append(vols, map[string]any{"name": "tokens", "secret": map[string]any{"secretName": o.TokensSecret}})
		}
	}
	return podTmpl{
		Metadata: meta{Labels: o.meta("", component).Labels},
		Spec: podSpec{
			RestartPolicy: "Never", // a failed shard stays failed: the merge names it
			SecurityContext: map[string]any{"runAsNonRoot": true, "runAsUser": nonRootUser, "runAsGroup": nonRootUser,
				"fsGroup": nonRootUser}, // the results volume is writable by the image's user
			Containers: []container{{
				Name: component, Image: o.Image, Args: args, Env: env, EnvFrom: envFrom, VolumeMounts: mounts,
				SecurityContext: map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
					"capabilities": map[string]any{"drop": []string{"ALL"}}},
			}},
			Volumes: vols,
		},
	}
}

func (o Options) shardJobManifest(deadline int64) object {
	n := strconv.Itoa(o.Shards)
	idx := "$(" + IndexEnv + ")" // expanded by the kubelet from the env below
	args := []string{"run", "--target", o.Target, "--scenario", ScenarioDir + "/" + ScenarioFile,
		"--shard", idx + "/" + n, "--start-at", o.StartAt.UTC().Format(time.RFC3339),
		"--out", ResultsDir + "/shard-" + idx, "--force"}
	if o.TokensSecret != "" {
		args = append(args, "--tokens-file", TokensDir+"/tokens")
	}
	args = append(args, o.RunArgs...)
	// The Job controller sets JOB_COMPLETION_INDEX itself; declaring it
	// from the pod's annotation makes $(JOB_COMPLETION_INDEX) in args
	// expand on every cluster version that has Indexed Jobs.
	env := []any{map[string]any{"name": IndexEnv, "valueFrom": map[string]any{
		"fieldRef": map[string]any{"fieldPath": "metadata.annotations['" + IndexAnnotation + "']"}}}}
	return object{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.shardJob(), "shard"), Spec: jobSpec{
		CompletionMode: "Indexed", Completions: o.Shards, Parallelism: o.Shards, BackoffLimit: 0,
		ActiveDeadlineSeconds: deadline, Template: o.pod("shard", args, env, true),
	}}
}

func (o Options) mergeJobManifest(deadline int64, wait time.Duration) object {
	args := []string{"merge"}
	for i := range o.Shards {
		args = append(args, ShardDir(i))
	}
	args = append(args, "--shards", strconv.Itoa(o.Shards), "--wait", wait.Round(time.Second).String(),
		"--out", ResultsDir+"/"+MergedDir, "--force")
	return object{APIVersion: "batch/v1", Kind: "Job", Metadata: o.meta(o.mergeJob(), "merge"), Spec: jobSpec{
		Completions: 1, Parallelism: 1, BackoffLimit: 0,
		ActiveDeadlineSeconds: deadline + int64(time.Minute.Seconds()),
		Template:              o.pod("merge", args, nil, false),
	}}
}

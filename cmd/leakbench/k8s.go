package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/leakbench/leakbench/internal/app/k8s"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

func cmdK8s(_ context.Context, c *cli, args []string) error {
	fs := c.flagSet("k8s")
	var o k8s.Options
	fs.IntVar(&o.Shards, "shards", 0, "how many pods play the scenario, each a shard (required)")
	scenario := fs.String("scenario", "", "the scenario `FILE` (required); it goes into a ConfigMap, its data files into another, mounted beside it")
	fs.StringVar(&o.Target, "target", "", "the MCP endpoint the shards load, as the pods reach it (required)")
	fs.StringVar(&o.Image, "image", "", "the leakbench image, as the cluster pulls it (required): build it with leakbench images and push it")
	fs.StringVar(&o.Name, "name", "leakbench", "prefix of every object's name")
	fs.StringVar(&o.Namespace, "namespace", "", "namespace of every object (default: kubectl's current)")
	startIn := fs.Duration("start-in", 2*time.Minute, "the shards start their load this long after now (time to apply, schedule and pull); render right before applying")
	startAt := fs.String("start-at", "", "the shards' common start, RFC 3339 (instead of --start-in)")
	fs.StringVar(&o.PVC, "pvc", "", "an existing ReadWriteMany PersistentVolumeClaim for the results (default: render NAME-results)")
	fs.StringVar(&o.StorageClass, "storage-class", "", "storage class of the rendered claim (default: the cluster's; it must offer ReadWriteMany)")
	fs.StringVar(&o.StorageSize, "storage-size", "1Gi", "size of the rendered claim")
	fs.StringVar(&o.TokensSecret, "tokens-secret", "", "a Secret whose key \"tokens\" holds bearer tokens, one a line (--tokens-file of every shard)")
	fs.StringVar(&o.ScenarioSecret, "scenario-secret", "", "a Secret whose key \"scenario.yaml\" holds the scenario (kubectl create secret generic NAME --from-file=scenario.yaml=FILE), mounted instead of a ConfigMap: for a scenario with inline tokens or credential headers, which are never printed into the manifests")
	fs.StringVar(&o.EnvSecret, "env-secret", "", "a Secret whose keys become every shard's environment: the secrets of run's flags (LEAKBENCH_PROBE_DSN, LEAKBENCH_OAUTH_CLIENT_SECRET, …), which --run-arg must not carry")
	fs.Func("run-arg", "one more flag for every shard's leakbench run (repeat it: --run-arg=--ca-file=/x); none may carry a secret (use --env-secret)", func(s string) error {
		o.RunArgs = append(o.RunArgs, s)
		return nil
	})
	out := fs.String("out", "-", "write the manifests to this `FILE` (-: standard output)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench k8s --shards N --scenario FILE --target URL --image IMAGE [flags] | kubectl apply -f -\n\nRenders an Indexed Job of N pods, each playing one shard of the scenario (run --shard\n$(JOB_COMPLETION_INDEX)/N, all from one --start-at), a ConfigMap with the scenario (and one with its\ndata files, mounted beside it), a claim for the results and a Job that merges them (leakbench merge)\ninto /results/%s on the claim. The merge Job fails (exit 99) when a merged threshold fails, or a\nshard is missing, failed or late.\n\n", k8s.MergedDir)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if *scenario == "" || o.Shards == 0 || o.Target == "" || o.Image == "" {
		return fmt.Errorf("%w: want --shards N --scenario FILE --target URL --image IMAGE", cliflag.ErrUsage)
	}
	raw, err := os.ReadFile(*scenario)
	if err != nil {
		return fmt.Errorf("read scenario: %w", err)
	}
	o.Scenario = raw
	prof, err := loadProfile("", *scenario) // a profile file is a scenario file too
	if err != nil {
		return err
	}
	o.Plan = prof.Plan
	if o.DataFiles, err = k8s.ReadDataFiles(prof.Plan); err != nil {
		return err
	}
	_, at, err := shardFlags("", *startAt, time.Now())
	if err != nil {
		return err
	}
	if at.IsZero() {
		at = time.Now().Add(*startIn).Truncate(time.Second)
	}
	o.StartAt = at
	// Rendered in full first: a refusal (a secret the manifests would
	// print) leaves no file behind.
	var buf bytes.Buffer
	if err := k8s.Render(&buf, o); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	if *out == "-" {
		if _, err := c.stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the manifests: %w", err)
	}
	fmt.Fprintf(c.stderr, "shards start at %s; then: kubectl wait --for=condition=complete job/%s-merge --timeout=2h (its activeDeadlineSeconds bounds it); the merged run directory is %s/%s on the claim (%s, %s)\n",
		at.UTC().Format(time.RFC3339), o.Name, k8s.ResultsDir, k8s.MergedDir, rundir.SummaryFile, rundir.HTMLFile)
	return nil
}

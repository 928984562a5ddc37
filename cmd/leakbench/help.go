package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// envHelp is --env's help wherever leakbench starts the reference stack:
// the same default (auto) and words on every command.
const envHelp = "where leakbench starts the reference stack: auto (docker when an engine answers, else local), docker or local"

// helpGroups sort a command's flags by purpose in its help, in this
// order; a flag no group claims is listed last, under the command's own
// name.
var helpGroups = []cliflag.Group{
	{Title: "What to load", Has: cliflag.Names("profile", "scenario", "e", "vus", "duration", "iterations", "scenario-name", "shard", "start-at",
		"load", "start", "max", "factor", "resolution", "stage", "max-stages", "workers", "source-addrs")},
	{Title: "Your service and its probes", Has: func(n string) bool {
		return cliflag.Names("target", "name", "tokens-file", "metrics-url", "probe-dsn", "probe-dsn-file", "pgbouncer-admin-dsn", "pgbouncer-admin-dsn-file",
			"ca-file", "insecure-skip-verify", "fault-link", "mapping", "database", "interval", "stuck-after", "server-log")(n) ||
			strings.HasPrefix(n, "oauth-") || strings.HasPrefix(n, "before-") || strings.HasPrefix(n, "after-")
	}},
	{Title: "The reference stack", Has: cliflag.Names("env", "variant", "variant-before", "variant-after", "shards", "capacity")},
	{Title: "Verdict and output", Has: func(n string) bool {
		return cliflag.Names("out", "force", "mode", "baseline", "regression-rule", "history", "release", "bisect", "keep-query-text",
			"metrics-addr", "min", "v")(n) || strings.HasPrefix(n, "otlp-") || strings.HasPrefix(n, "dashboard")
	}},
}

// ownFlags are flags whose name a group claims but which mean something
// of the command's own there: soak's --baseline is a duration of probing
// before the load, not a stored run.
var ownFlags = map[string][]string{"soak": {"baseline"}}

// helpExamples are the command lines every subcommand's help ends with.
var helpExamples = map[string][]string{
	"run": {"leakbench run --variant commit-in-finally --out out/run",
		"leakbench run --target https://staging.example.com/mcp --scenario s.yaml --probe-dsn-file dsn.txt --out out/run",
		"leakbench run --target http://127.0.0.1:8080/mcp --scenario s.yaml --vus 20 --duration 1m --baseline out/main-run --out out/pr-run"},
	"signoff": {"leakbench signoff --profile ci --out out/signoff",
		"leakbench signoff --before-target http://127.0.0.1:8080/mcp --after-target http://127.0.0.1:8081/mcp --mode fix --scenario s.yaml --probe-dsn-file dsn.txt --out out/signoff",
		"leakbench signoff --profile all --env local --out out/all"},
	"soak": {"leakbench soak --out out/soak",
		"leakbench soak --target http://127.0.0.1:8080/mcp --scenario s.yaml --probe-dsn-file dsn.txt --duration 30m --out out/soak"},
	"capacity": {"leakbench capacity --out out/capacity",
		"leakbench capacity --target http://127.0.0.1:8080/mcp --scenario s.yaml --probe-dsn-file dsn.txt --min 200 --out out/capacity"},
	"probe": {"leakbench probe --probe-dsn-file dsn.txt --out out/probe",
		"leakbench probe --probe-dsn-file dsn.txt --pgbouncer-admin-dsn-file pgb.txt --metrics-url http://127.0.0.1:8080/metrics --duration 10m --out out/probe"},
	"compare": {"leakbench compare --mode fix out/before out/after --out out/compare",
		"leakbench compare --mode regression out/main-run out/pr-run --out out/compare"},
	"init": {"leakbench init --target http://127.0.0.1:8000/mcp",
		"leakbench init --target https://staging.example.com/mcp --tokens-file tokens.txt --try --out mine.yaml",
		"leakbench init --target http://127.0.0.1:8000/mcp --probe-dsn-file probe.dsn --out -"},
	"scale": {"leakbench scale --vus 200 --token-file dash.token",
		"leakbench scale --addr 127.0.0.1:5665 --scenario agents --vus 50 --token-file dash.token"},
	"report":   {"leakbench report out/run", "leakbench report out/signoff/after"},
	"merge":    {"leakbench merge out/shard-1 out/shard-2 --out out/run", "leakbench merge --shards 4 --wait 10m out/shard-* --out out/run"},
	"k8s":      {"leakbench k8s --scenario s.yaml --target http://svc:8080/mcp --shards 4 --out k8s/", "leakbench k8s --scenario s.yaml --target http://svc:8080/mcp --shards 2 --out - | kubectl apply -f -"},
	"trend":    {"leakbench trend out/history --out out/trend", "leakbench trend --out out/trend out/history"},
	"gateway":  {"leakbench gateway --variant fixed --dsn-file app-dsn.txt --listen 127.0.0.1:8080", "LEAKBENCH_GATEWAY_DSN=postgres://… leakbench gateway --variant commit-in-finally"},
	"upstream": {"leakbench upstream --listen 127.0.0.1:8090", "leakbench upstream --listen 127.0.0.1:8090 --latency 2s --failure-rate 0.05"},
	"up":       {"leakbench up --variant fixed", "leakbench up --env docker --variant commit-in-finally --show-secrets"},
	"images":   {"leakbench images", "leakbench images --rebuild"},
	"version":  {"leakbench version", "leakbench version | head -1"},
	"completion": {"leakbench completion bash > /etc/bash_completion.d/leakbench",
		"leakbench completion zsh > \"${fpath[1]}/_leakbench\"", "leakbench completion fish > ~/.config/fish/completions/leakbench.fish"},
	"faultproxy": {"leakbench faultproxy --link db=0.0.0.0:16432=pgbouncer:6432", "leakbench faultproxy --api 127.0.0.1:8474 --link pg=0.0.0.0:15432=postgres:5432"},
}

// printFlags prints fs's flags grouped by purpose (helpGroups), leaving
// out the hidden aliases, and then the command's examples.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	cliflag.PrintGroups(w, fs, helpGroups, ownFlags[fs.Name()])
	fmt.Fprintf(w, "\nEvery command also takes --quiet (only the verdict and the report's path) and --no-color (or NO_COLOR).\n")
	if ex := helpExamples[fs.Name()]; len(ex) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

package k8s

import (
	"fmt"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// Secrets never go into the manifests: a ConfigMap's data and a Job's args
// are plain text to whoever may read the namespace (kubectl get, kubectl
// describe), and to the terminal and files the manifests are rendered to.
// Secrets reach the shards through Kubernetes Secrets instead: the
// tokens (TokensSecret), the scenario itself when it holds a credential
// (ScenarioSecret), and run's secret flags as their environment variables
// (EnvSecret). What counts as a secret is package redact's policy, and
// plan's for header names.

// secretRunFlags are leakbench run's flags whose values are secrets, each
// with the environment variable run reads it from instead.
var secretRunFlags = map[string]string{
	"probe-dsn": "LEAKBENCH_PROBE_DSN", "dsn": "LEAKBENCH_PROBE_DSN",
	"pgbouncer-admin-dsn": "LEAKBENCH_PGBOUNCER_ADMIN_DSN", "pgbouncer": "LEAKBENCH_PGBOUNCER_ADMIN_DSN",
	"oauth-client-secret": "LEAKBENCH_OAUTH_CLIENT_SECRET",
}

// checkSecrets says which secrets o would print into the manifests, and
// how to pass each through a Secret instead; it never quotes one.
func (o Options) checkSecrets(p *plan.Plan) []error {
	var errs []error
	if o.ScenarioSecret == "" {
		var in []string
		if len(p.Tokens) > 0 && p.TokensFile == "" {
			errs = append(errs, fmt.Errorf("the scenario holds bearer tokens inline (tokens:), which would be printed into the ConfigMap: "+
				"move them to a file, one a line, create a Secret from it (kubectl create secret generic NAME --from-file=tokens=FILE) and give --tokens-secret NAME"))
		}
		in = append(in, p.SecretHeaders()...)
		if p.Target != "" && redact.URL(p.Target) != p.Target {
			in = append(in, "target")
		}
		if len(in) > 0 {
			errs = append(errs, fmt.Errorf("the scenario's %s look like credentials, which would be printed into the ConfigMap: "+
				"create a Secret from the scenario file (kubectl create secret generic NAME --from-file=%s=FILE) and give --scenario-secret NAME, "+
				"which mounts it instead; or send the credential as bearer tokens (--tokens-secret)", strings.Join(in, ", "), ScenarioFile))
		}
	}
	if masked := redact.URL(o.Target); masked != o.Target {
		errs = append(errs, fmt.Errorf("--target %s carries a secret (a password, a token or a secret query parameter), which would be printed into the shards' Job: "+
			"give the endpoint without it and the credential as bearer tokens in a Secret (--tokens-secret)", masked))
	}
	for i := 0; i < len(o.RunArgs); i++ {
		arg := o.RunArgs[i]
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		env, secretFlag := secretRunFlags[name]
		secretFlag = secretFlag && strings.HasPrefix(arg, "-")
		if secretFlag && !hasVal && i+1 < len(o.RunArgs) {
			i++ // --probe-dsn VALUE: the value is the next argument
			val, hasVal = o.RunArgs[i], true
		}
		switch {
		case secretFlag && hasVal && (name == "oauth-client-secret" || redact.DSN(val) != val):
			probe := ""
			if name != "oauth-client-secret" {
				probe = " (or leave the probing to leakbench probe beside the shards: every shard would probe the same database)"
			}
			errs = append(errs, fmt.Errorf("--run-arg --%s carries a secret, which would be printed into the shards' Job: "+
				"put it into a Secret as %s (kubectl create secret generic NAME --from-literal=%s=VALUE, or --from-file=%s=FILE) and give --env-secret NAME: leakbench run reads %s from its environment%s",
				name, env, env, env, env, probe))
		case redact.String(o.RunArgs[i]) != o.RunArgs[i]:
			errs = append(errs, fmt.Errorf("--run-arg %s carries a secret, which would be printed into the shards' Job: "+
				"pass it through a Secret (--env-secret NAME, as the environment variable of the flag) instead", redact.String(o.RunArgs[i])))
		}
	}
	return errs
}

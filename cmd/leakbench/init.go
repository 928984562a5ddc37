package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/mcp/bearer"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
	"github.com/leakbench/leakbench/scenarios/starter"
)

// initUsage is init's -h text before its flags.
const initUsage = `Usage: leakbench init --target URL [--out FILE] [--try] [--probe-dsn DSN] [flags]

Connects to an MCP service as a client, lists its tools, resources and prompts, and
writes a commented starter scenario: one weighted branch per tool with arguments from
its inputSchema (# TODO where the schema cannot settle one), a probe: section and
thresholds. It never replaces an existing file unless --force (exit 2 otherwise).
`

// cmdInit is `leakbench init`: a starter scenario written from what the
// service says about itself (scenarios/starter).
func cmdInit(ctx context.Context, c *cli, args []string) error {
	return runInit(ctx, c, args)
}

// runInit is cmdInit: the scenario goes to c.stdout with --out -, every
// message to c.stderr.
func runInit(ctx context.Context, c *cli, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	fs := c.flagSet("init")
	target := fs.String("target", "", "your MCP endpoint, any http(s) `URL` (required)")
	out := fs.String("out", "leakbench.yaml", "the scenario `FILE` to write; - writes it to standard output")
	force := fs.Bool("force", false, "replace --out if it exists")
	var try bool
	tryUsage := "call each tool (and prompt, resource) once with the synthesised arguments; those that fail are written commented out with their answer. It calls your tools: writes happen"
	fs.BoolVar(&try, "try", false, tryUsage)
	timeout := fs.Duration("timeout", 10*time.Second, "bound on each request; a tried call that takes longer is written commented out")
	tokensFile := fs.String("tokens-file", "", "file of bearer tokens, one a line; init lists as the first (never written into the scenario)")
	probeDSNFlag := cliflag.NewSecret(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "PostgreSQL `DSN` the probes will use: init checks its pg_monitor grant, idle_in_transaction_session_timeout, max_connections and the application names connected, and writes them as comments", "dsn")
	probeDSNFlag.Getenv = c.getenv
	tf := addTargetFlags(fs) // --ca-file, --insecure-skip-verify, --oauth-*
	tf.Getenv, tf.ClientID.Getenv, tf.Secret.Getenv = c.getenv, c.getenv, c.getenv
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), initUsage)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("%w: --target URL is required (the MCP endpoint, e.g. http://127.0.0.1:8000/mcp)", cliflag.ErrUsage)
	}
	if *out == "" {
		return fmt.Errorf("%w: --out FILE is empty (- writes to standard output)", cliflag.ErrUsage)
	}
	// Refused before the service is contacted: with --try the tools are
	// called, which must not happen for a file that is not written.
	// WriteFile checks again, atomically.
	if *out != "-" && !*force {
		if _, err := os.Lstat(*out); err == nil {
			return fmt.Errorf("%w: %w: %s; give --force to replace it, or another --out", cliflag.ErrUsage, starter.ErrExists, *out)
		}
	}
	if *timeout <= 0 {
		return fmt.Errorf("%w: --timeout %s: want a positive duration", cliflag.ErrUsage, *timeout)
	}
	o := starter.Options{Target: *target, TryCalls: try, Timeout: *timeout}
	topts, err := tf.Options()
	if err != nil {
		return err
	}
	o.TLS = topts.TLS
	if *tokensFile != "" {
		if topts.OAuth != nil {
			return fmt.Errorf("%w: give --tokens-file or --oauth-token-url, not both", cliflag.ErrUsage)
		}
		toks, err := scenariofile.ReadTokens(*tokensFile)
		if err != nil {
			return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
		}
		o.Token = toks[0]
	}
	if topts.OAuth != nil {
		o.Tokens = bearer.NewOAuthTokens(*topts.OAuth)
	}
	if o.ProbeDSN, err = probeDSNFlag.Value(); err != nil {
		return err
	}

	o.RunLine = runLine(*target, *out, *tokensFile)
	res, err := starter.Init(ctx, o)
	switch {
	case errors.Is(err, starter.ErrOptions):
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%w: init: %w", runner.ErrInterrupted, err)
	case err != nil && certRefused(err):
		return fmt.Errorf("init %s: %w (a private CA: --ca-file FILE; a self-signed staging server: --insecure-skip-verify)", redact.URL(*target), err)
	case err != nil:
		return fmt.Errorf("init %s: %w", redact.URL(*target), err)
	}

	if *out == "-" {
		if _, err := stdout.Write(res.YAML); err != nil {
			return fmt.Errorf("write the scenario to standard output: %w", err)
		}
	} else if err := starter.WriteFile(*out, res.YAML, *force); err != nil {
		if errors.Is(err, starter.ErrExists) {
			return fmt.Errorf("%w: %w", cliflag.ErrUsage, err) // created meanwhile
		}
		return err
	}
	where := *out
	if where == "-" {
		where = "standard output"
	}
	fmt.Fprintf(stderr, "leakbench init: wrote the starter scenario to %s\n", where)
	for _, n := range res.Notes {
		// A note may quote the service's or PostgreSQL's answer.
		fmt.Fprintf(stderr, "  %s\n", redact.String(n))
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "next: read the # TODO lines, then: %s\n", o.RunLine)
	}
	return nil
}

// runLine is the command that plays the starter file written as out
// (leakbench.yaml when it goes to standard output), with the tokens file
// init was given: printed when init is done and written into the file's
// header. The DSN itself is never echoed: the probes take it as init did.
func runLine(target, out, tokensFile string) string {
	if out == "-" {
		out = "leakbench.yaml"
	}
	line := []string{"leakbench run --target", redact.URL(target), "--scenario", out}
	if tokensFile != "" {
		line = append(line, "--tokens-file", tokensFile)
	}
	return strings.Join(append(line, "--probe-dsn-file FILE --out out/run"), " ")
}

// certRefused reports whether err is an https target's certificate that
// did not verify. The MCP SDK keeps some errors' text, not their chain:
// the text is looked at too.
func certRefused(err error) bool {
	var verr *tls.CertificateVerificationError
	return errors.As(err, &verr) || strings.Contains(err.Error(), "x509: ")
}

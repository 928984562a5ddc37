package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
	"github.com/leakbench/leakbench/scenarios/starter"
)

// initRun runs `leakbench init ARGS` in-process, returning its error and
// what it wrote to standard output and standard error.
func initRun(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	err = runInit(ctx, newCLI(&o, &e, os.Getenv), args)
	return o.String(), e.String(), err
}

// loadStarter parses a written scenario as `leakbench run --scenario`
// does, its probe: section too.
func loadStarter(t *testing.T, file string) {
	t.Helper()
	var probe rundir.ProbeSettings
	p, err := scenariofile.Load(file, scenariofile.Section{Key: "probe", Into: &probe})
	if err != nil {
		raw, _ := os.ReadFile(file)
		t.Fatalf("the written scenario does not load: %v\n%s", err, raw)
	}
	if len(p.Scenarios) == 0 || probe.Interval <= 0 {
		t.Errorf("loaded %d scenarios, probe %+v", len(p.Scenarios), probe)
	}
}

// TestInitWritesAndPlays: against the go-sdk's server, behind a bearer
// token, `init --tokens-file F --try` writes leakbench.yaml (the default
// --out) that loads as a scenario, lists the tools with the token, keeps
// the token out of the file, comments out the tools that fail when
// tried; `leakbench run --scenario` then plays it with no failure.
func TestInitWritesAndPlays(t *testing.T) {
	const token = "tok-3f9a-init"
	srv := mcptest.Start(t, mcptest.Options{SDK: true, Authorized: func(tok string) bool { return tok == token }})
	dir := t.TempDir()
	t.Chdir(dir)                        // the default --out is relative
	t.Setenv("LEAKBENCH_PROBE_DSN", "") // the environment does not add a database check
	tokens := filepath.Join(dir, "tokens.txt")
	if err := os.WriteFile(tokens, []byte("# users\n"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := initRun(t, "--target", srv.URL, "--tokens-file", tokens, "--try", "--timeout", "1s")
	if err != nil {
		t.Fatalf("init: %v\n%s", err, stderr)
	}
	t.Logf("init said:\n%s", stderr)
	file := filepath.Join(dir, "leakbench.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no file at the default --out: %v", err)
	}
	loadStarter(t, file)
	y := string(raw)
	for _, want := range []string{
		`name: "echo"`,
		"# Tried once, it failed: isError: the tool failed on purpose",
		"# Tried once, it failed: no answer within 1s",
		"Each call was tried once",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	if strings.Contains(y, token) || strings.Contains(stderr, token) {
		t.Error("the bearer token was written or printed")
	}
	// The header's run line is the one init prints: this file's name and
	// the tokens file it was given.
	run := "leakbench run --target " + srv.URL + " --scenario leakbench.yaml --tokens-file " + tokens + " --probe-dsn-file FILE --out out/run"
	if !strings.Contains(y, "#   "+run+"\n") || !strings.Contains(stderr, "then: "+run+"\n") {
		t.Errorf("the header and the next line do not both say %q:\n%s\n%s", run, y, stderr)
	}
	if stdout != "" {
		t.Errorf("init wrote to standard output with --out FILE: %q", stdout)
	}
	if !strings.Contains(stderr, "wrote the starter scenario to leakbench.yaml") || !strings.Contains(stderr, "tools listed") {
		t.Errorf("stderr does not say what was written:\n%s", stderr)
	}
	if srv.Count("tools/call") == 0 {
		t.Error("--try called no tool")
	}

	// Played as written but shorter: the edit a user makes before a first
	// look.
	short := strings.Replace(y, "duration: 30s", "duration: 2s", 1)
	if short == y {
		t.Fatal("the file has no duration: 30s to shorten")
	}
	if err := os.WriteFile(file, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if err := cmdRun(context.Background(), testCLI(), []string{"--target", srv.URL, "--tokens-file", tokens, "--scenario", file, "--out", out}); err != nil {
		t.Fatalf("run the written scenario: %v", err)
	}
	raw, err = os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum rundir.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Load == nil || sum.Load.Requests < 5 || sum.Load.Failures != 0 {
		t.Errorf("played the written scenario: %+v; want requests and no failure", sum.Load)
	}
}

// TestInitStdout: --out - writes the scenario to standard output and no
// file; the messages go to standard error.
func TestInitStdout(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	stdout, stderr, err := initRun(t, "--target", srv.URL, "--out", "-")
	if err != nil {
		t.Fatalf("init: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "# Starter scenario for ") || !strings.Contains(stdout, "\nscenarios:\n") {
		t.Fatalf("standard output is not the scenario:\n%s", stdout)
	}
	if strings.Contains(stdout, "wrote the starter scenario") {
		t.Error("a message went to standard output, into the scenario")
	}
	file := filepath.Join(dir, "piped.yaml")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	loadStarter(t, file)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("--out - left files behind: %v", entries)
	}
}

// TestInitKeepsExistingFile: an existing --out is refused with exit 2
// naming it, unchanged, before the service is contacted (--try would
// call its tools); --force replaces it.
func TestInitKeepsExistingFile(t *testing.T) {
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	file := filepath.Join(t.TempDir(), "mine.yaml")
	const mine = "# my own scenario, edited by hand\n"
	if err := os.WriteFile(file, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := initRun(t, "--target", srv.URL, "--out", file, "--try")
	if code := exitCode(err); code != exitUsage || !errors.Is(err, starter.ErrExists) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("init over an existing file: %v (exit %d); want exit %d naming the file and --force", err, code, exitUsage)
	}
	if raw, _ := os.ReadFile(file); string(raw) != mine {
		t.Fatalf("the existing file was changed:\n%s", raw)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the service got %d requests for a file that was not written", n)
	}

	if _, stderr, err := initRun(t, "--target", srv.URL, "--out", file, "--force"); err != nil {
		t.Fatalf("init --force: %v\n%s", err, stderr)
	}
	if raw, _ := os.ReadFile(file); !bytes.HasPrefix(raw, []byte("# Starter scenario for ")) {
		t.Fatalf("--force did not replace the file:\n%s", raw)
	}
	loadStarter(t, file)
}

// TestInitNotMCP: a plain HTTP server answering 404 is not MCP: exit 1
// with a message saying what it answered, nothing written, to a file or
// to standard output.
func TestInitNotMCP(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // 127.0.0.1
	defer srv.Close()
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	dir := t.TempDir()
	file := filepath.Join(dir, "leakbench.yaml")
	for _, out := range []string{file, "-"} {
		stdout, _, err := initRun(t, "--target", srv.URL+"/mcp", "--out", out)
		if code := exitCode(err); code != exitRunFailed || !errors.Is(err, starter.ErrNotMCP) {
			t.Fatalf("--out %s: %v (exit %d); want ErrNotMCP, exit %d", out, err, code, exitRunFailed)
		}
		t.Logf("--out %s: %v", out, err)
		if msg := err.Error(); !strings.Contains(msg, "not an MCP server") || !strings.Contains(msg, "404") {
			t.Errorf("the message does not say what the target answered: %s", msg)
		}
		if stdout != "" {
			t.Errorf("--out %s: wrote to standard output: %q", out, stdout)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed init left files: %v", entries)
	}
}

// TestInitUsage: mistakes on the command line are exit 2 and write
// nothing; -h shows the usage with examples.
func TestInitUsage(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.txt")
	if err := os.WriteFile(tokens, []byte("t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.yaml")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--target URL is required"},
		{[]string{"--target", "ftp://127.0.0.1/mcp"}, "not an http(s) URL"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "extra"}, "unexpected argument"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--timeout", "0s"}, "--timeout"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--tokens-file", filepath.Join(dir, "none")}, "tokens file"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--tokens-file", tokens, "--oauth-token-url", "http://127.0.0.1:1/token", "--oauth-client-id", "a", "--oauth-client-secret", "b"}, "not both"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--oauth-client-id", "a"}, "need --oauth-token-url"},
		{[]string{"--target", "http://127.0.0.1:1/mcp", "--nope"}, "flag provided but not defined"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := initRun(t, append(tt.args, "--out", out)...)
			if code := exitCode(err); code != exitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v (exit %d); want exit %d saying %q", err, code, exitUsage, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused init wrote %s", out)
			}
		})
	}

	if commands["init"].run == nil {
		t.Error("init is not in main's command table")
	}
	help, _, err := initRun(t, "-h") // help goes to stdout
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != exitOK {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"Usage: leakbench init --target URL", "Examples:", "leakbench init --target http://127.0.0.1:8000/mcp\n", "-probe-dsn", "-tokens-file", "-ca-file", "-force"} {
		if !strings.Contains(help, want) {
			t.Errorf("-h lacks %q:\n%s", want, help)
		}
	}
}

// TestInitReachesTheService: init reaches a service as run does, through
// the flags it shares with run: an https target's CA (--ca-file; without
// it the certificate is refused, exit 1, nothing written), OAuth client
// credentials (the token endpoint's token is the bearer token), and a
// probe DSN from a file (one that cannot be reached is a note in the
// file, its password in neither the file nor the messages).
func TestInitReachesTheService(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	const oauthToken = "oauth-77d1"
	tokenEndpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "init-client" || secret != "init-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"` + oauthToken + `","token_type":"Bearer","expires_in":3600}`))
	}))
	defer tokenEndpoint.Close()
	tlsSrv := mcptest.Start(t, mcptest.Options{SDK: true, TLS: true})
	oauthSrv := mcptest.Start(t, mcptest.Options{SDK: true, Authorized: func(tok string) bool { return tok == oauthToken }})

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	dsnFile := filepath.Join(dir, "probe.dsn")
	if err := os.WriteFile(dsnFile, []byte("postgres://probe:hunter2@127.0.0.1:1/app\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "https.yaml")
	if _, _, err := initRun(t, "--target", tlsSrv.URL, "--out", out); exitCode(err) != exitRunFailed || !strings.Contains(err.Error(), "--ca-file") {
		t.Errorf("an https target whose CA is not given: %v; want exit %d naming --ca-file", err, exitRunFailed)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused certificate left a file")
	}
	if _, stderr, err := initRun(t, "--target", tlsSrv.URL, "--ca-file", ca, "--out", out); err != nil {
		t.Fatalf("--ca-file: %v\n%s", err, stderr)
	}
	loadStarter(t, out)

	t.Setenv("LEAKBENCH_OAUTH_CLIENT_SECRET", "init-secret") // as a CI job gives it
	out = filepath.Join(dir, "oauth.yaml")
	_, stderr, err := initRun(t, "--target", oauthSrv.URL, "--oauth-token-url", tokenEndpoint.URL, "--oauth-client-id", "init-client",
		"--probe-dsn-file", dsnFile, "--out", out)
	if err != nil {
		t.Fatalf("OAuth: %v\n%s", err, stderr)
	}
	loadStarter(t, out)
	raw, _ := os.ReadFile(out)
	if !strings.Contains(string(raw), `name: "echo"`) || !strings.Contains(string(raw), "The probe DSN could not be checked") {
		t.Errorf("the file lacks the tools or the probe DSN's note:\n%s", raw)
	}
	for _, secret := range []string{"hunter2", "init-secret", oauthToken} {
		if strings.Contains(string(raw), secret) || strings.Contains(stderr, secret) {
			t.Errorf("%q was written or printed", secret)
		}
	}
	if oauthSrv.Count("tools/list") == 0 {
		t.Error("the OAuth-protected service was not listed")
	}
}

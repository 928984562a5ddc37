package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeOverlay is the compose file users put beside their service
// (docs/getting-started/own-service.md); fixtures' e2e test
// TestComposeOverlayRunsBesideAService runs it for real.
const composeOverlay = "../../examples/compose/leakbench.compose.yml"

// ownServiceGuide shows the overlay, without its comments.
const ownServiceGuide = "../../docs/getting-started/own-service.md"

// composeVar is compose's interpolation: ${NAME}, ${NAME:-default},
// ${NAME:?message}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}`)

// interpolate fills in the compose file's variables as docker-compose
// does, from vars; a variable neither in vars nor with a default fails.
func interpolate(t *testing.T, s string, vars map[string]string) string {
	t.Helper()
	return composeVar.ReplaceAllStringFunc(s, func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		if v, ok := vars[g[1]]; ok {
			return v
		}
		if g[2] == "-" {
			return g[3]
		}
		t.Errorf("%s: ${%s} has no default and the test does not set it", composeOverlay, g[1])
		return ""
	})
}

// TestComposeOverlayParsesWithRunFlags: the overlay's command is parsed by
// run's real flag set, in-process, so that the file cannot name a flag
// the CLI does not have. It also checks what the overlay promises: the
// image's own entrypoint, the project directory mounted, a user that can
// write to it, no secret on the command line or in the file.
func TestComposeOverlayParsesWithRunFlags(t *testing.T) {
	raw, err := os.ReadFile(composeOverlay)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"LEAKBENCH_VERSION": "v0.0.0-test", "LEAKBENCH_USER": "1000:1000",
		"SERVICE_HOST": "app", "SERVICE_PORT": "8000",
	}
	var file struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Entrypoint  any               `yaml:"entrypoint"`
			Command     []string          `yaml:"command"`
			User        string            `yaml:"user"`
			Volumes     []string          `yaml:"volumes"`
			WorkingDir  string            `yaml:"working_dir"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%s: %v", composeOverlay, err)
	}
	svc, ok := file.Services["leakbench"]
	if !ok || len(file.Services) != 1 {
		t.Fatalf("%s: want one service, leakbench; got %d services", composeOverlay, len(file.Services))
	}
	if img := interpolate(t, svc.Image, vars); img != "leakbench/leakbench:v0.0.0-test" {
		t.Errorf("image %q: want leakbench/leakbench:${LEAKBENCH_VERSION}", img)
	}
	if svc.Entrypoint != nil {
		t.Errorf("entrypoint %v: the image's own (/leakbench) is what the command is written for", svc.Entrypoint)
	}
	if interpolate(t, svc.User, vars) != "1000:1000" {
		t.Errorf("user %q: want ${LEAKBENCH_USER}, so that the run directory is writable", svc.User)
	}
	if svc.WorkingDir != "/work" || len(svc.Volumes) != 1 || !strings.HasSuffix(svc.Volumes[0], ":/work") {
		t.Errorf("working_dir %q, volumes %q: want the project directory at /work", svc.WorkingDir, svc.Volumes)
	}
	if len(svc.Environment) > 0 {
		t.Errorf("environment %v: secrets go in files, never in the compose file", svc.Environment)
	}

	args := make([]string, len(svc.Command))
	for i, a := range svc.Command {
		args[i] = interpolate(t, a, vars)
	}
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("command %q: want leakbench run", args)
	}
	// -h last: every flag before it is parsed (an unknown one is exit 2),
	// then run prints its help and exits 0 without touching a file or the
	// network. The flag set's values are then read back.
	var stdout, stderr bytes.Buffer
	c := newCLI(&stdout, &stderr, func(string) string { return "" })
	if code := c.main(context.Background(), append(args, "-h")); code != exitOK {
		t.Fatalf("leakbench %s: exit %d, want the flags to parse\n%s", strings.Join(args, " "), code, stderr.String())
	}
	fs := c.lastFlags
	want := map[string]string{
		"target":         "http://app:8000/mcp",
		"scenario":       "/work/leakbench.yaml",
		"probe-dsn-file": "/work/probe-dsn.txt",
		"out":            "/work/out/run",
	}
	set := map[string]string{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = f.Value.String() })
	if fmt.Sprint(set) != fmt.Sprint(want) {
		t.Errorf("run's flags from the overlay:\n got %v\nwant %v", set, want)
	}
	// A flag that also has a NAME-file form takes a secret: only the file
	// form may appear (a command line shows in ps and docker inspect).
	for name := range set {
		if fs.Lookup(name+"-file") != nil {
			t.Errorf("--%s on the command line: a secret; use --%s-file", name, name)
		}
	}

	// The exit codes the comments explain are the CLI's.
	for _, code := range []int{exitOK, exitRunFailed, exitUsage, exitVerdict} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^#\s+%d\s+\S`, code)).Match(raw) {
			t.Errorf("%s: its comments do not explain exit code %d", composeOverlay, code)
		}
	}
}

// TestComposeOverlayInTheGuide: the guide's copy of the overlay is the
// file's, comments aside, so that a reader copying either gets the same.
func TestComposeOverlayInTheGuide(t *testing.T) {
	raw, err := os.ReadFile(composeOverlay)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(ownServiceGuide)
	if err != nil {
		t.Fatal(err)
	}
	var file, shown map[string]any
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	for _, b := range blocks {
		if bytes.Contains(b[1], []byte("leakbench/leakbench:")) {
			if err := yaml.Unmarshal(b[1], &shown); err != nil {
				t.Fatalf("%s: the overlay's block: %v", ownServiceGuide, err)
			}
			break
		}
	}
	if shown == nil {
		t.Fatalf("%s shows no yaml block with leakbench/leakbench:", ownServiceGuide)
	}
	if !reflect.DeepEqual(file, shown) {
		t.Errorf("%s's overlay differs from %s:\n got %v\nwant %v", ownServiceGuide, composeOverlay, shown, file)
	}
}

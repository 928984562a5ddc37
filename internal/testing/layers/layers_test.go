package layers_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
)

const module = "github.com/leakbench/leakbench"

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// list runs `go list -json` on pkgs from the module's root.
func list(t *testing.T, pkgs ...string) map[string]listed {
	t.Helper()
	// go test puts its own go first on PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go tool (the test reads the import graph with go list)")
	}
	cmd := exec.Command(gobin, append([]string{"list", "-json"}, pkgs...)...)
	cmd.Dir = "../../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(pkgs, " "), err, stderr.String())
	}
	got := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("read go list's output: %v", err)
		}
		got[strings.TrimPrefix(p.ImportPath, module+"/")] = p
	}
	return got
}

// listTests is what the tests of pkgs import (in-package and external
// tests together), by package path relative to the module.
func listTests(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for rel, l := range list(t, pkgs...) {
		out[rel] = append(append([]string(nil), l.TestImports...), l.XTestImports...)
	}
	return out
}

// stackPackages are what a probe, a report or the engine must not link:
// the containers' client, the fault proxies, the official MCP SDK and the
// reference gateway.
var stackPackages = []string{
	"github.com/testcontainers/",
	"github.com/moby/",
	"github.com/docker/",
	"github.com/Shopify/toxiproxy",
	"github.com/modelcontextprotocol/go-sdk",
	module + "/gateway-under-test",
	module + "/fixtures",
}

// TestLibrariesLinkNoStack: the run directory, the probes, the reports,
// the engine and the profile format (profiles, stack) name no
// testcontainers, moby, toxiproxy, go-sdk, fixtures or
// gateway package among their dependencies.
func TestLibrariesLinkNoStack(t *testing.T) {
	pkgs := []string{"internal/lib/rundir", "probes", "reports", "scenarios/engine", "scenarios/profiles", "scenarios/stack"}
	args := make([]string, len(pkgs))
	for i, p := range pkgs {
		args[i] = "./" + p
	}
	got := list(t, args...)
	for _, p := range pkgs {
		l, ok := got[p]
		if !ok {
			t.Fatalf("go list said nothing of %s", p)
		}
		for _, d := range l.Deps {
			for _, bad := range stackPackages {
				if strings.HasPrefix(d, bad) {
					t.Errorf("%s depends on %s", p, d)
				}
			}
		}
	}
}

// TestRunDirectoryIsALeaf: the run directory's formats import nothing of
// the project.
func TestRunDirectoryIsALeaf(t *testing.T) {
	l := list(t, "./internal/lib/rundir")["internal/lib/rundir"]
	for _, d := range l.Deps {
		if strings.HasPrefix(d, module+"/") {
			t.Errorf("internal/lib/rundir depends on %s", d)
		}
	}
}

// TestStackPackagesAreSeen keeps the checks above able to fail: the whole
// CLI does link the stack.
func TestStackPackagesAreSeen(t *testing.T) {
	l := list(t, "./cmd/leakbench")["cmd/leakbench"]
	seen := 0
	for _, d := range l.Deps {
		for _, bad := range stackPackages {
			if strings.HasPrefix(d, bad) {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("cmd/leakbench links none of the stack's packages: the lists above match nothing")
	}
}

//go:build install

package install

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInstallFromEmptyModuleCache: the module builds from a copy of the
// tree with nothing in the module cache, every module fetched through
// GOPROXY (the environment's, or Go's default), CGO_ENABLED=0 — what
// `go install …/cmd/leakbench@latest` does on a user's machine. The build
// cache is the machine's: it holds compiled packages, keyed by their
// content, and cannot stand in for a module that is not downloaded.
func TestInstallFromEmptyModuleCache(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root := moduleRoot(t, gobin)
	src := t.TempDir()
	copyTree(t, root, src)

	// go install …@latest refuses a module whose go.mod replaces or
	// excludes modules: the copy must have none.
	var mod struct {
		Module  struct{ Path string }
		Replace []json.RawMessage
		Exclude []json.RawMessage
	}
	out := run(t, gobin, src, nil, "mod", "edit", "-json")
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if mod.Module.Path != "github.com/leakbench/leakbench" || len(mod.Replace) > 0 || len(mod.Exclude) > 0 {
		t.Fatalf("go.mod: module %q, %d replace, %d exclude: go install @latest wants no replace or exclude",
			mod.Module.Path, len(mod.Replace), len(mod.Exclude))
	}

	modcache, gopath := freshDir(t, gobin, "modcache"), freshDir(t, gobin, "gopath")
	env := []string{
		"GOMODCACHE=" + modcache, "GOPATH=" + gopath, "GOFLAGS=-mod=mod",
		"CGO_ENABLED=0", "GOWORK=off",
	}
	bin := filepath.Join(t.TempDir(), "leakbench")
	start := time.Now()
	run(t, gobin, src, env, "build", "-o", bin, "./cmd/leakbench")
	t.Logf("built from an empty module cache in %s", time.Since(start).Round(time.Second))

	// The modules came from the proxy, into the fresh cache.
	if _, err := os.Stat(filepath.Join(modcache, "cache", "download", "github.com", "jackc", "pgx")); err != nil {
		t.Errorf("pgx was not downloaded into the fresh module cache: %v", err)
	}
	// The binary is the command, static.
	info := string(run(t, gobin, src, nil, "version", "-m", bin))
	for _, want := range []string{"path\tgithub.com/leakbench/leakbench/cmd/leakbench", "build\tCGO_ENABLED=0"} {
		if !strings.Contains(info, want) {
			t.Errorf("go version -m %s lacks %q:\n%s", bin, want, info)
		}
	}
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T, gobin string) string {
	t.Helper()
	gomod := strings.TrimSpace(string(run(t, gobin, ".", nil, "env", "GOMOD")))
	if filepath.Base(gomod) != "go.mod" {
		t.Fatalf("go env GOMOD: %q", gomod)
	}
	return filepath.Dir(gomod)
}

// copyTree copies the regular files of the tree at from to to, as a
// module zip would hold them: not .git, not the build's bin and out.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" || rel == "bin" || rel == "out" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git is a file
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy the tree: %v", err)
	}
}

// freshDir is an empty directory removed after the test. The module cache
// is written read-only: go clean -modcache empties it first (t.TempDir's
// own removal would fail on it).
func freshDir(t *testing.T, gobin, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "leakbench-install-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd := exec.Command(gobin, "clean", "-modcache")
		cmd.Env = append(os.Environ(), "GOMODCACHE="+dir, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go clean -modcache (%s): %v\n%s", dir, err, out)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// run runs go with args in dir, the environment overridden by env, and
// returns its standard output; a failure ends the test with its output.
func run(t *testing.T, gobin, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(os.Environ()), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

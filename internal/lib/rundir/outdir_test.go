package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// A source tree that merely has a config.json (the reproduction in #18)
// loses nothing, with or without --force.
func TestPrepareRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "config.json"), "{}")
	write(t, filepath.Join(dir, "summary.json"), "{}")
	write(t, filepath.Join(dir, "src", "main.go"), "package main")
	for _, force := range []bool{false, true} {
		err := Prepare(dir, force)
		if err == nil {
			t.Fatalf("Prepare(force=%v) on a foreign directory succeeded", force)
		}
		if force && !strings.Contains(err.Error(), "not created by leakbench") {
			t.Errorf("force: error %q does not say the directory is not leakbench's", err)
		}
	}
	for _, f := range []string{"config.json", "summary.json", "src/main.go"} {
		if !exists(filepath.Join(dir, f)) {
			t.Errorf("%s was removed", f)
		}
	}
}

// A marked directory with a file leakbench did not write is refused, the
// foreign files are named, and nothing is removed.
func TestPrepareForceNamesForeignFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Prepare(dir, false); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "summary.json"), "{}")
	write(t, filepath.Join(dir, "plots", "stuck.png"), "png")
	write(t, filepath.Join(dir, "plots", "notes.txt"), "mine")
	write(t, filepath.Join(dir, "src", "main.go"), "package main")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "report.html")); err != nil {
		t.Fatal(err)
	}
	err := Prepare(dir, true)
	if err == nil {
		t.Fatal("Prepare(force) with foreign files succeeded")
	}
	for _, want := range []string{"src/", filepath.Join("plots", "notes.txt"), "report.html"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	for _, f := range []string{"summary.json", "plots/stuck.png", "plots/notes.txt", "src/main.go", "report.html"} {
		if !exists(filepath.Join(dir, f)) {
			t.Errorf("%s was removed although the directory was refused", f)
		}
	}
}

// A directory of leakbench's own output, nested runs included, is cleared
// with --force and only without it refused.
func TestPrepareForceClearsOwnOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "signoff")
	if err := Prepare(dir, false); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"before", "after"} {
		if err := Prepare(filepath.Join(dir, sub), false); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"config.json", "samples.jsonl", "episodes.jsonl", "load.jsonl", "summary.json", "report.md", "logs/postgres.log", "plots/stuck.svg", "summary.json.tmp123"} {
			write(t, filepath.Join(dir, sub, f), "x")
		}
	}
	for _, f := range []string{"compare.json", "report.html", "junit.xml", "plots/stuck.png"} {
		write(t, filepath.Join(dir, f), "x")
	}
	if err := Prepare(dir, false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Prepare without force on earlier output: err = %v, want a refusal naming --force", err)
	}
	if err := Prepare(dir, true); err != nil {
		t.Fatalf("Prepare(force) on leakbench's own output: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != MarkerFile {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("after clearing, %s holds %v; want only %s", dir, names, MarkerFile)
	}
}

func TestPrepareCreatesAndMarks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := Prepare(dir, false); err != nil {
		t.Fatal(err)
	}
	if !hasMarker(dir) {
		t.Fatal("new output directory has no marker")
	}
	if err := Prepare("", false); err == nil {
		t.Fatal("Prepare(\"\") succeeded")
	}
}

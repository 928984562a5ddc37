package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomic: the file is replaced whole, 0644, with no temporary
// file left; the directory is synced after the rename (the new content is
// already under its name when the sync runs); a failed write leaves the
// old content and no temporary file; a failed directory sync is reported
// and leaves the new file in place.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	syncDir = func(d string) error {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != "new" {
			t.Errorf("directory synced before the rename: %q %v", b, err)
		}
		synced = append(synced, d)
		return syncDirectory(d)
	}
	t.Cleanup(func() { syncDir = syncDirectory })

	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Errorf("directories synced: %q, want [%q]", synced, dir)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v %v, want 0644", fi, err)
	}
	onlyFile := func() {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != 1 || ents[0].Name() != "x.json" {
			t.Errorf("directory holds %v %v, want only x.json", ents, err)
		}
	}
	onlyFile()

	boom := errors.New("boom")
	err := WriteFileFunc(path, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failed write: %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after a failed write: %q, want the old content", b)
	}
	onlyFile()

	syncDir = func(string) error { return boom }
	if err := WriteFile(path, []byte("newer")); !errors.Is(err, boom) {
		t.Errorf("failed directory sync: %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "newer" {
		t.Errorf("after a failed directory sync: %q, want the renamed file", b)
	}
	onlyFile()
}

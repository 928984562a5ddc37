package rundir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes data to path whole or not at all: through a temporary
// file in the same directory (".NAME.*"), synced, then renamed, so that a
// reader — or a crash — never sees half a file, only the old content or
// the whole new one. The file is readable by everyone (0644): run
// directories hold no secret, and the files of an owned directory
// (fixtures) are kept private by the directory's own mode (0700).
//
// It is leakbench's one atomic write: the run directory's files, the
// HdrHistogram logs, the trend pages and the owned directories' markers
// all go through it.
func WriteFile(path string, data []byte) error {
	return WriteFileFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileFunc is WriteFile with the content written by write.
func WriteFileFunc(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	// CreateTemp makes the file 0600.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	// Synced before the rename: otherwise a power loss after it may leave
	// path naming an empty file.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

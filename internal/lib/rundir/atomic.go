package rundir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile writes data to path whole or not at all: through a temporary
// file in the same directory (".NAME.*"), synced, then renamed, so that a
// reader — or a crash — never sees half a file, only the old content or
// the whole new one; the directory is synced after the rename, so that
// the new name itself survives a power loss. The file is readable by
// everyone (0644): run directories hold no secret, and the files of an
// owned directory (fixtures) are kept private by the directory's own mode
// (0700).
//
// It is leakbench's one atomic write: the run directory's files, the
// HdrHistogram logs, the trend pages and the owned directories' markers
// all go through it.
//
// Why not github.com/google/renameio/v2, which does the temporary file,
// its fsync and the rename: it concerns itself only with atomicity (its
// README says so) and does not sync the directory, which is the step
// this function would still have to add; unless given a directory, it
// probes $TMPDIR with two test files and a test rename on every write;
// its mode is 0600 less the umask where we want 0644 exactly; and it
// does not build on Windows. What is left here is a dozen lines.
func WriteFile(path string, data []byte) error {
	return WriteFileFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileFunc is WriteFile with the content written by write.
func WriteFileFunc(path string, write func(io.Writer) error) error {
	if err := replace(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir is the directory sync after the rename; a variable so that a
// test sees when it is called.
var syncDir = syncDirectory

func replace(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		// After the rename the temporary name no longer exists: it is not
		// removed then (another write may have taken it).
		if err != nil && !renamed {
			_ = f.Close()
			_ = os.Remove(f.Name())
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
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("sync directory after the rename: %w", err)
	}
	return nil
}

// syncDirectory fsyncs dir, which makes a rename inside it durable. A file
// system that cannot sync a directory (EINVAL: some network mounts,
// Windows) is not an error: there the rename is as durable as it gets.
func syncDirectory(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	return errors.Join(err, d.Close())
}

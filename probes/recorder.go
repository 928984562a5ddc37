package probes

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// recorder appends samples and episodes to their files. Each record is
// handed to the operating system with one write(2) as soon as it is taken:
// a process killed at any instant leaves every record before it complete
// in the file (the kernel's page cache keeps it), at the cost of ten small
// writes a second. There is no fsync: a machine that loses power may lose
// the last seconds. After its first write error it stops writing and
// reports that error at close.
type recorder struct {
	samples, episodes *os.File
	buf               []byte
	err               error
}

func openRecorder(dir string) (*recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	r := &recorder{}
	var err error
	if r.samples, err = openAppend(dir, rundir.SamplesFile); err != nil {
		return nil, err
	}
	if r.episodes, err = openAppend(dir, rundir.EpisodesFile); err != nil {
		r.samples.Close()
		return nil, err
	}
	return r, nil
}

func openAppend(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return f, nil
}

func (r *recorder) sample(s *rundir.Sample)   { r.write(r.samples, s) }
func (r *recorder) episode(e *rundir.Episode) { r.write(r.episodes, e) }

func (r *recorder) write(f *os.File, v any) {
	if r.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		r.buf = append(append(r.buf[:0], b...), '\n')
		_, err = f.Write(r.buf)
	}
	if err != nil {
		r.err = fmt.Errorf("write %s: %w", filepath.Base(f.Name()), err)
	}
}

// close closes the files and returns the first error.
func (r *recorder) close() error {
	errs := []error{r.err}
	for _, f := range []*os.File{r.samples, r.episodes} {
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", filepath.Base(f.Name()), err))
		}
	}
	return errors.Join(errs...)
}

// WriteSummaryFile writes s to path (usually RunDir/rundir.ProbeSummaryFile) as
// indented JSON, atomically: into a temporary file in the same directory,
// synced, then renamed over path. A crash at any point leaves the previous
// file (or none) or the whole new one, never half a JSON; on an error the
// temporary file is removed and path is untouched.
func WriteSummaryFile(path string, s *rundir.ProbeSummary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode probe summary: %w", err)
	}
	if err := rundir.WriteFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write probe summary: %w", err)
	}
	return nil
}

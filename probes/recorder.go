package probes

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Files a Poller writes into Config.RunDir, one JSON value per line,
// appended as sampling goes so that a killed run keeps what it saw.
const (
	SamplesFile  = "samples.jsonl"
	EpisodesFile = "episodes.jsonl"
)

// flushEvery bounds how much a crash can lose.
const flushEvery = time.Second

// recorder appends samples and episodes to their files. After its first
// write error it stops writing and reports that error at close.
type recorder struct {
	files     []*os.File
	samples   *bufio.Writer
	episodes  *bufio.Writer
	lastFlush time.Time
	err       error
}

func openRecorder(dir string) (*recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	r := &recorder{lastFlush: time.Now()}
	for _, name := range []string{SamplesFile, EpisodesFile} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("open %s: %w", name, err)
		}
		r.files = append(r.files, f)
	}
	r.samples = bufio.NewWriter(r.files[0])
	r.episodes = bufio.NewWriter(r.files[1])
	return r, nil
}

func (r *recorder) sample(s Sample)   { r.write(r.samples, s, SamplesFile) }
func (r *recorder) episode(e Episode) { r.write(r.episodes, e, EpisodesFile) }

func (r *recorder) write(w *bufio.Writer, v any, name string) {
	if r.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err == nil {
		_, err = w.Write(append(b, '\n'))
	}
	if err != nil {
		r.err = fmt.Errorf("write %s: %w", name, err)
	}
}

// tick flushes when the last flush is flushEvery old.
func (r *recorder) tick(now time.Time) {
	if now.Sub(r.lastFlush) >= flushEvery {
		r.flush()
		r.lastFlush = now
	}
}

func (r *recorder) flush() {
	if r.err != nil {
		return
	}
	for i, w := range []*bufio.Writer{r.samples, r.episodes} {
		if err := w.Flush(); err != nil {
			r.err = fmt.Errorf("write %s: %w", filepath.Base(r.files[i].Name()), err)
			return
		}
	}
}

// close flushes and closes the files and returns the first error.
func (r *recorder) close() error {
	if r.samples != nil {
		r.flush()
	}
	errs := []error{r.err}
	for _, f := range r.files {
		if err := f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", filepath.Base(f.Name()), err))
		}
	}
	return errors.Join(errs...)
}

package merge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/results"
)

// mergeRequests writes the merged run's requests.jsonl: every shard's
// request index, one after the other. Trace ids are random per request
// and user indices unique across shards, so the lines need no rewriting;
// reports join episodes to them by trace id, whichever shard sent the
// request. The files are streamed (a 30-minute shard at 5,000 requests/s
// writes about 2 GB) and a shard's last line, cut short when it was
// killed, is left out. No shard with an index: no file.
func mergeRequests(out string, shards []*results.Shard) error {
	var have []string
	for _, sh := range shards {
		p := filepath.Join(sh.Dir, rundir.RequestsFile)
		if _, err := os.Stat(p); err == nil {
			have = append(have, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", p, err)
		}
	}
	if len(have) == 0 {
		return nil
	}
	return rundir.WriteFileFunc(filepath.Join(out, rundir.RequestsFile), func(w io.Writer) error {
		for _, p := range have {
			if err := copyWholeLines(w, p); err != nil {
				return fmt.Errorf("merge %s: %w", p, err)
			}
		}
		return nil
	})
}

// copyWholeLines copies the file at path to w up to its last newline.
func copyWholeLines(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	end, err := lastNewline(f, st.Size())
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = io.CopyN(w, f, end)
	return err
}

// lastNewline is the length of f's prefix that ends with its last
// newline (0: none), read backwards in blocks from size.
func lastNewline(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

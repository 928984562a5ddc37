package forensics

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// JoinEpisodes gives each episode of the run in dir whose trace id is in
// the run's request index that request (rundir.Episode.Request), rewriting
// episodes.jsonl atomically; a line that does not decode (a torn last one)
// is kept as it was. It returns how many episodes carried a trace id and
// how many of those were joined. A run without episodes or without a
// request index is left alone. Both files are streamed: memory grows
// with the episodes' trace ids and their requests, not with the files.
func JoinEpisodes(dir string) (traced, joined int, err error) {
	path := filepath.Join(dir, rundir.EpisodesFile)
	ids := map[string]bool{}
	err = eachLine(path, func(line []byte) error {
		var e rundir.Episode
		if json.Unmarshal(line, &e) == nil && e.TraceID != "" {
			ids[e.TraceID] = true
			traced++
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("join episodes: %w", err)
	}
	if traced == 0 {
		return 0, 0, nil
	}
	reqs, ok := requestsFor(dir, func(id string) bool { return ids[id] })
	if !ok {
		return traced, 0, nil
	}
	err = rundir.WriteFileFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		err := eachLine(path, func(line []byte) error {
			var e rundir.Episode
			if json.Unmarshal(line, &e) != nil {
				bw.Write(line) // as it was: nothing recorded is dropped
				return bw.WriteByte('\n')
			}
			if r, found := reqs[e.TraceID]; found && e.TraceID != "" {
				e.Request = episodeRequest(r)
				joined++
			}
			out, err := json.Marshal(&e)
			if err != nil {
				return err
			}
			bw.Write(out)
			return bw.WriteByte('\n')
		})
		if err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return traced, 0, fmt.Errorf("join episodes: %w", err)
	}
	return traced, joined, nil
}

// eachLine calls f with each line of the file at path, streamed.
func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := jsonl.Scanner(file)
	for sc.Scan() {
		if err := f(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Package jsonl reads the JSON Lines files of a run directory
// (samples.jsonl, episodes.jsonl, load.jsonl, requests.jsonl) a line at a
// time, in memory that does not grow with the file. A line that does not
// decode is counted, not fatal: a killed run may leave its last line half
// written.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// MaxLine bounds one line (a sample with a long query is a few KB).
const MaxLine = 4 << 20

// Scanner returns a scanner of rd's lines, each up to MaxLine long.
func Scanner(rd io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	return sc
}

// Each calls fn with each line of rd that decodes as a T, at most limit of
// them (limit < 0: all), each in a value of its own, in the file's order,
// and returns how many lines did not decode. Blank lines are skipped.
//
// Reading a whole file (limit < 0) decodes it on every core: an hour's
// soak writes hundreds of MB of episodes, and encoding/json decodes a few
// tens of MB a second on one core. Lines go in batches to decoders while
// fn, called on one goroutine at a time, takes the decoded values batch
// by batch in order; at most a few batches are in memory at once.
func Each[T any](rd io.Reader, limit int, fn func(*T)) (bad int, err error) {
	workers := runtime.GOMAXPROCS(0)
	if limit >= 0 || workers < 2 {
		return eachInOrder(rd, limit, fn)
	}
	type batch struct {
		lines [][]byte
		vals  []*T // nil where the line did not decode
		done  chan struct{}
	}
	toDecode := make(chan *batch, workers)
	inOrder := make(chan *batch, 2*workers)
	var decoders sync.WaitGroup
	for range workers {
		decoders.Go(func() {
			for b := range toDecode {
				b.vals = make([]*T, len(b.lines))
				for i, line := range b.lines {
					v := new(T)
					if json.Unmarshal(line, v) == nil {
						b.vals[i] = v
					}
				}
				close(b.done)
			}
		})
	}
	consumed := make(chan int)
	go func() {
		bad := 0
		for b := range inOrder {
			<-b.done
			for _, v := range b.vals {
				if v == nil {
					bad++
					continue
				}
				fn(v)
			}
		}
		consumed <- bad
	}()
	sc := Scanner(rd)
	const batchLines = 256
	cur := &batch{done: make(chan struct{})}
	send := func() {
		inOrder <- cur
		toDecode <- cur
		cur = &batch{done: make(chan struct{})}
	}
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		cur.lines = append(cur.lines, bytes.Clone(line))
		if len(cur.lines) == batchLines {
			send()
		}
	}
	if len(cur.lines) > 0 {
		send()
	}
	close(toDecode)
	close(inOrder)
	bad = <-consumed
	decoders.Wait()
	return bad, sc.Err()
}

// eachInOrder is Each on the calling goroutine alone.
func eachInOrder[T any](rd io.Reader, limit int, fn func(*T)) (bad int, err error) {
	sc := Scanner(rd)
	for n := 0; n != limit && sc.Scan(); {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v := new(T)
		if json.Unmarshal(line, v) != nil {
			bad++
			continue
		}
		fn(v)
		n++
	}
	return bad, sc.Err()
}

// Read appends one value per line of rd to *dst, as Each reads them.
func Read[T any](rd io.Reader, dst *[]T) (bad int, err error) {
	return Each(rd, -1, func(v *T) { *dst = append(*dst, *v) })
}

// ReadFile reads every line of the file at path as a T, strictly: a
// whole line that does not decode is an error naming it. A last line
// without its newline is one still being written (or cut by a kill) and
// is left out. For readers that must not pass over a bad line, such as
// tests of what was written.
func ReadFile[T any](path string) ([]T, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i]
	} else {
		raw = nil
	}
	var out []T
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}

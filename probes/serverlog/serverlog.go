package serverlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// logPrefix is what log_line_prefix must start with for the probe to read
// kills from the log: PostgreSQL's default since version 10 ('%m [%p] ').
const logPrefix = "%m [%p]"

// killLine matches the FATAL line a backend logs as it is killed, with
// log_line_prefix '%m [%p] ' and lc_messages in English: by
// idle_in_transaction_session_timeout (SQLSTATE 25P03) or by
// pg_terminate_backend (57P01, "administrator command").
var killLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) \S+ \[(\d+)\] FATAL:  terminating connection due to (idle-in-transaction timeout|administrator command)`)

// killMarker is a cheap test before the regular expression.
var killMarker = []byte("] FATAL:  terminating connection due to ")

// Log reads the kills PostgreSQL logs from its log file, from where the
// file ended when it was opened on. It is not safe for concurrent use: the
// probe reads it from its sampling goroutine only.
type Log struct {
	f       *os.File
	off     int64
	loc     *time.Location
	partial []byte // a line not yet ended
	buf     []byte
	kills   map[int32][]Kill
	latest  time.Time
}

// Kill is one backend killed, as the log says.
type Kill struct {
	// At is the time of the line, as its timestamp says it (%m: to the
	// millisecond), in UTC.
	At time.Time
	// Reason is rundir.EndTimeout or rundir.EndTerminated.
	Reason string
}

// Bounds of what a Log reads and keeps.
const (
	// maxLogRead bounds one poll's read: a server logging faster than
	// that per sample is not one whose kills are worth the probe's time.
	maxLogRead = 1 << 20
	// keepKills: kills older than this (before the latest) are dropped.
	keepKills = 2 * time.Minute
)

// Open opens the log file at path, to read what the server writes from
// now on; tz is log_timezone, the zone of the log's timestamps.
func Open(path, tz string) (*Log, error) {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("server log: log_timezone %q: %w", tz, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("server log: %w", err)
	}
	return &Log{f: f, off: off, loc: loc, kills: make(map[int32][]Kill)}, nil
}

// CheckPrefix says why a log_line_prefix does not do: the kills are read
// only from lines that start as PostgreSQL's default prefix does.
func CheckPrefix(prefix string) error {
	if !strings.HasPrefix(prefix, logPrefix) {
		return fmt.Errorf("server log: log_line_prefix is %q; the probe reads kills only from lines starting %q (PostgreSQL's default): ends of timeout and terminated episodes stay estimates", prefix, logPrefix+" ")
	}
	return nil
}

// Poll reads what the server has written since the last poll (since Open
// at first). A log cut back (rotated by copy and truncate) is read from its
// start.
func (l *Log) Poll() error {
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	if fi.Size() < l.off { // truncated or replaced: start over
		l.off, l.partial = 0, l.partial[:0]
	}
	n := min(fi.Size()-l.off, maxLogRead)
	if n <= 0 {
		return nil
	}
	if int64(cap(l.buf)) < n {
		l.buf = make([]byte, n)
	}
	got, err := l.f.ReadAt(l.buf[:n], l.off)
	l.off += int64(got)
	data := l.buf[:got]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		l.line(line)
		data = data[i+1:]
	}
	if len(l.partial)+len(data) <= maxLogRead {
		l.partial = append(l.partial, data...)
	} else {
		l.partial = l.partial[:0]
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("server log: %w", err)
	}
	return nil
}

func (l *Log) line(line []byte) {
	if !bytes.Contains(line, killMarker) {
		return
	}
	m := killLine.FindSubmatch(line)
	if m == nil {
		return
	}
	at, err := time.ParseInLocation("2006-01-02 15:04:05", string(m[1]), l.loc)
	pid, perr := strconv.ParseInt(string(m[2]), 10, 32)
	if err != nil || perr != nil {
		return
	}
	reason := rundir.EndTerminated
	if string(m[3]) == "idle-in-transaction timeout" {
		reason = rundir.EndTimeout
	}
	at = at.UTC()
	l.kills[int32(pid)] = append(l.kills[int32(pid)], Kill{At: at, Reason: reason})
	if at.After(l.latest) {
		l.latest = at
		l.prune()
	}
}

// prune drops the kills long before the latest (at most once a second of
// log time, in effect: called when the latest advances).
func (l *Log) prune() {
	cut := l.latest.Add(-keepKills)
	for pid, ks := range l.kills {
		i := 0
		for _, k := range ks {
			if !k.At.Before(cut) {
				ks[i] = k
				i++
			}
		}
		if i == 0 {
			delete(l.kills, pid)
		} else {
			l.kills[pid] = ks[:i]
		}
	}
}

// Find returns, and forgets, the kill of backend pid logged within
// [from, to].
func (l *Log) Find(pid int32, from, to time.Time) (Kill, bool) {
	ks := l.kills[pid]
	for i, k := range ks {
		if !k.At.Before(from) && !k.At.After(to) {
			l.kills[pid] = append(ks[:i], ks[i+1:]...)
			return k, true
		}
	}
	return Kill{}, false
}

// Close closes the log file.
func (l *Log) Close() error { return l.f.Close() }

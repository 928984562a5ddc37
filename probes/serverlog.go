package probes

import (
	"bytes"
	"context"
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

// logSettingsSQL reads what the probe needs to read the server's log: its
// line prefix and the zone of its timestamps.
const logSettingsSQL = `SELECT current_setting('log_line_prefix'), current_setting('log_timezone')`

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

// serverLog reads the kills PostgreSQL logs from its log file, from where
// the file ended when it was opened on. It is read from the sampling
// goroutine only.
type serverLog struct {
	f       *os.File
	off     int64
	loc     *time.Location
	partial []byte // a line not yet ended
	buf     []byte
	kills   map[int32][]logKill
	latest  time.Time
}

// logKill is one backend killed, as the log says.
type logKill struct {
	at     time.Time
	reason string // EndTimeout or EndTerminated
}

// Bounds of what serverLog reads and keeps.
const (
	// maxLogRead bounds one poll's read: a server logging faster than
	// that per sample is not one whose kills are worth the probe's time.
	maxLogRead = 1 << 20
	// keepKills: kills older than this (before the latest) are dropped.
	keepKills = 2 * time.Minute
)

// openServerLog opens the log file at path, to read what the server
// writes from now on; tz is log_timezone.
func openServerLog(path, tz string) (*serverLog, error) {
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
	return &serverLog{f: f, off: off, loc: loc, kills: make(map[int32][]logKill)}, nil
}

// checkLogPrefix says why a log_line_prefix does not do.
func checkLogPrefix(prefix string) error {
	if !strings.HasPrefix(prefix, logPrefix) {
		return fmt.Errorf("server log: log_line_prefix is %q; the probe reads kills only from lines starting %q (PostgreSQL's default): ends of timeout and terminated episodes stay estimates", prefix, logPrefix+" ")
	}
	return nil
}

// poll reads what the server has written since the last poll.
func (l *serverLog) poll() error {
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

func (l *serverLog) line(line []byte) {
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
	l.kills[int32(pid)] = append(l.kills[int32(pid)], logKill{at: at, reason: reason})
	if at.After(l.latest) {
		l.latest = at
		l.prune()
	}
}

// prune drops the kills long before the latest (at most once a second of
// log time, in effect: called when the latest advances).
func (l *serverLog) prune() {
	cut := l.latest.Add(-keepKills)
	for pid, ks := range l.kills {
		i := 0
		for _, k := range ks {
			if !k.at.Before(cut) {
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

// find returns, and forgets, the kill of backend pid logged within
// [from, to].
func (l *serverLog) find(pid int32, from, to time.Time) (logKill, bool) {
	ks := l.kills[pid]
	for i, k := range ks {
		if !k.at.Before(from) && !k.at.After(to) {
			l.kills[pid] = append(ks[:i], ks[i+1:]...)
			return k, true
		}
	}
	return logKill{}, false
}

func (l *serverLog) close() error { return l.f.Close() }

// logSettings reads log_line_prefix and log_timezone.
func (s *pgSampler) logSettings(ctx context.Context) (prefix, tz string, err error) {
	conn, err := s.link.get(ctx)
	if err != nil {
		return "", "", err
	}
	if err := conn.QueryRow(ctx, logSettingsSQL).Scan(&prefix, &tz); err != nil {
		return "", "", s.link.failed(fmt.Errorf("read log settings: %w", err))
	}
	return prefix, tz, nil
}

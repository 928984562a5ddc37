// Package userdata reads the per-user data files of scenarios — a CSV file
// with a header line, or a JSON array of objects — into a compact table
// that every virtual user shares: every cell's text in one byte slice,
// four bytes of offset per cell, so a million rows cost little more than
// their bytes.
//
//	t, err := userdata.ReadFile("users.csv") // errors name the file and its line
//	col, _ := t.Column("email")
//	email := t.Cell(row, col)
package userdata

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Bounds on a data file.
const (
	maxDataBytes   = 1 << 30
	maxDataColumns = 256
	maxDataRows    = 100_000_000
)

// Table holds a data file's rows compactly: every cell's text in one
// byte slice, cell k ending at off[k+1]; a million rows cost their bytes
// plus four per cell.
type Table struct {
	// Columns are the header's names, in file order.
	Columns []string
	buf     []byte
	off     []uint32 // len rows*cols+1; off[0] == 0
	raw     []uint64 // bit per cell: its text is a JSON value (a number, true, an object, ...), not a string
	rows    int
}

// Rows returns the number of rows.
func (t *Table) Rows() int { return t.rows }

// Column returns the index of column name.
func (t *Table) Column(name string) (int, bool) {
	for i, c := range t.Columns {
		if c == name {
			return i, true
		}
	}
	return 0, false
}

// CellBytes returns one cell's text and whether it is a JSON value (a
// number, true, an object, …) rather than a string. The bytes are the
// table's: do not modify them.
func (t *Table) CellBytes(row, col int) ([]byte, bool) {
	k := row*len(t.Columns) + col
	return t.buf[t.off[k]:t.off[k+1]], t.raw[k/64]&(1<<(k%64)) != 0
}

// Cell returns the text of one cell.
func (t *Table) Cell(row, col int) string {
	b, _ := t.CellBytes(row, col)
	return string(b)
}

func (t *Table) addCell(text []byte, raw bool) error {
	k := len(t.off) - 1
	if len(t.buf)+len(text) > maxDataBytes {
		return fmt.Errorf("more than %d bytes of values", maxDataBytes)
	}
	t.buf = append(t.buf, text...)
	t.off = append(t.off, uint32(len(t.buf)))
	if k/64 >= len(t.raw) {
		t.raw = append(t.raw, 0)
	}
	if raw {
		t.raw[k/64] |= 1 << (k % 64)
	}
	return nil
}

// dataError is a problem in a data file, at a line of it.
type dataError struct {
	file string
	line int
	msg  string
}

func (e *dataError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return e.file + ": " + e.msg
}

// ReadFile reads a data file: JSON if its name ends in .json, else
// CSV. Errors name the file and its line.
func ReadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := filepath.Base(path)
	r := bufio.NewReaderSize(io.LimitReader(f, maxDataBytes+1), 64<<10)
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return ReadJSON(r, name)
	}
	return ReadCSV(r, name)
}

func checkColumns(name string, line int, cols []string) error {
	if len(cols) > maxDataColumns {
		return &dataError{name, line, fmt.Sprintf("%d columns; at most %d", len(cols), maxDataColumns)}
	}
	for i, c := range cols {
		switch {
		case c == "" || strings.ContainsAny(c, " \t\r\n{}"):
			return &dataError{name, line, fmt.Sprintf("column %d's name %q must be non-empty, without spaces or braces", i+1, textutil.Truncate(c, 40))}
		case slices.Index(cols[:i], c) >= 0:
			return &dataError{name, line, fmt.Sprintf("column %q named twice", textutil.Truncate(c, 40))}
		}
	}
	return nil
}

// ReadCSV reads CSV (RFC 4180) whose first record names the columns;
// every row must have as many fields. name is for errors only.
func ReadCSV(r io.Reader, name string) (*Table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &dataError{name, 0, "empty; want a header line naming the columns, then rows"}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	t := &Table{Columns: append([]string(nil), header...), off: []uint32{0}}
	for i := range t.Columns {
		t.Columns[i] = strings.TrimSpace(t.Columns[i])
	}
	if err := checkColumns(name, 1, t.Columns); err != nil {
		return nil, err
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		if t.rows >= maxDataRows {
			line, _ := cr.FieldPos(0)
			return nil, &dataError{name, line, fmt.Sprintf("more than %d rows", maxDataRows)}
		}
		for _, v := range rec {
			if err := t.addCell([]byte(v), false); err != nil {
				line, _ := cr.FieldPos(0)
				return nil, &dataError{name, line, err.Error()}
			}
		}
		t.rows++
	}
	if t.rows == 0 {
		return nil, &dataError{name, 1, "a header but no rows"}
	}
	return t, nil
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "this row's number of fields differs from the header's (a missing or extra column)"
		}
		return &dataError{name, pe.Line, msg}
	}
	return &dataError{name, 0, err.Error()}
}

// ReadJSON reads a JSON array of objects; the first object's keys are
// the columns and every other object must have exactly those keys. String
// values are their text; other values (numbers, booleans, null, objects,
// arrays) are kept as JSON. name is for errors only.
func ReadJSON(r io.Reader, name string) (*Table, error) {
	lr := &lineCounter{r: r}
	dec := json.NewDecoder(lr)
	dec.UseNumber()
	lineAt := func() int { return lr.lineAt(dec.InputOffset()) }
	bad := func(msg string) error { return &dataError{name, lineAt(), msg} }
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, &dataError{name, 0, "empty; want a JSON array of objects"}
	}
	if err != nil {
		return nil, bad("not valid JSON: " + jsonMsg(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, bad("want a JSON array of objects")
	}
	t := &Table{off: []uint32{0}}
	var (
		vals []json.RawMessage
		seen []bool
		text []byte
	)
	for dec.More() {
		if t.rows >= maxDataRows {
			return nil, bad(fmt.Sprintf("more than %d rows", maxDataRows))
		}
		if tok, err = dec.Token(); err != nil {
			return nil, bad("not valid JSON: " + jsonMsg(err))
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return nil, bad(fmt.Sprintf("row %d is not an object", t.rows+1))
		}
		line := lineAt()
		first := t.rows == 0
		if !first {
			vals, seen = vals[:len(t.Columns)], seen[:len(t.Columns)]
			clear(seen)
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, bad("not valid JSON: " + jsonMsg(err))
			}
			key := kt.(string) // object keys are strings
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, bad("not valid JSON: " + jsonMsg(err))
			}
			if first {
				if slices.Index(t.Columns, key) >= 0 {
					return nil, bad(fmt.Sprintf("key %q given twice", textutil.Truncate(key, 40)))
				}
				t.Columns = append(t.Columns, key)
				vals, seen = append(vals, v), append(seen, true)
				continue
			}
			i := slices.Index(t.Columns, key)
			switch {
			case i < 0:
				return nil, &dataError{name, line, fmt.Sprintf("row %d has key %q, which the first row does not", t.rows+1, textutil.Truncate(key, 40))}
			case seen[i]:
				return nil, &dataError{name, line, fmt.Sprintf("row %d: key %q given twice", t.rows+1, textutil.Truncate(key, 40))}
			}
			vals[i], seen[i] = v, true
		}
		if _, err := dec.Token(); err != nil {
			return nil, bad("not valid JSON: " + jsonMsg(err))
		}
		if first {
			if len(t.Columns) == 0 {
				return nil, &dataError{name, line, "the first row has no keys; its keys name the columns"}
			}
			if err := checkColumns(name, line, t.Columns); err != nil {
				return nil, err
			}
		}
		for i, v := range vals {
			if !seen[i] {
				return nil, &dataError{name, line, fmt.Sprintf("row %d lacks column %q", t.rows+1, t.Columns[i])}
			}
			raw := true
			if len(v) > 0 && v[0] == '"' {
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					return nil, &dataError{name, line, "not valid JSON: " + jsonMsg(err)}
				}
				text, raw = append(text[:0], s...), false
			} else {
				var c bytes.Buffer
				if err := json.Compact(&c, v); err != nil {
					return nil, &dataError{name, line, "not valid JSON: " + jsonMsg(err)}
				}
				text = append(text[:0], c.Bytes()...)
			}
			if err := t.addCell(text, raw); err != nil {
				return nil, &dataError{name, line, err.Error()}
			}
		}
		t.rows++
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad("not valid JSON: " + jsonMsg(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("more after the array")
	}
	if t.rows == 0 {
		return nil, &dataError{name, 0, "an empty array; want at least one row"}
	}
	return t, nil
}

func jsonMsg(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of file"
	}
	return textutil.Truncate(err.Error(), 120)
}

// lineCounter counts the lines of what has been read, to turn a decoder's
// offset into a line number. Offsets are asked for in increasing order, so
// only the line starts read ahead of the last one asked are kept.
type lineCounter struct {
	r      io.Reader
	read   int64
	passed int     // lines that start at or before the last offset asked
	starts []int64 // offsets of the line starts after it
}

func (l *lineCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.starts = append(l.starts, l.read+int64(i)+1)
		}
	}
	l.read += int64(n)
	return n, err
}

// lineAt returns the line of offset off (not less than any asked before).
func (l *lineCounter) lineAt(off int64) int {
	k := 0
	for k < len(l.starts) && l.starts[k] <= off {
		k++
	}
	l.passed += k
	l.starts = append(l.starts[:0], l.starts[k:]...)
	return l.passed + 1
}

package plan

// Per-user data: a CSV file with a header or a JSON array of objects,
// read once and shared by every user, each of whom gets one row
// ({{data.COLUMN}}).

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/leakbench/leakbench/scenarios/userdata"
)

// How users get their row of a data file (DataSource.Mode).
const (
	// DataSequential: the scenario's user k gets row k mod rows (the
	// default).
	DataSequential = "sequential"
	// DataRandom: each user draws a row (seeded) when it starts.
	DataRandom = "random"
	// DataUnique: user k gets row k; a scenario that may run more users
	// at once than the file has rows is a plan error.
	DataUnique = "unique"
)

// When a user draws its row (DataSource.Per).
const (
	// DataPerUser: one row for the user's whole life (the default).
	DataPerUser = "user"
	// DataPerIteration: a fresh row every iteration — sequential: user
	// k's iteration i takes row (k + i × users) mod rows, so that the
	// users walk the file together; random: a seeded draw each time.
	// unique is per user only.
	DataPerIteration = "iteration"
)

// DataSource is a data file and how users get their rows. The file is
// read once, at the first Compile, and shared by every copy of the plan.
type DataSource struct {
	// File is a CSV file with a header line (.csv, or anything not .json)
	// or a JSON array of objects (.json); relative to the scenario file's
	// directory.
	File string
	// Mode is DataSequential (default), DataRandom or DataUnique.
	Mode string
	// Per is DataPerUser (default, also "") or DataPerIteration.
	Per string

	line int
	dir  string // the scenario file's directory
	once sync.Once
	tbl  *userdata.Table
	err  error
}

// MarshalJSON writes d as in a scenario file.
func (d *DataSource) MarshalJSON() ([]byte, error) {
	o := obj{{"file", d.File}}
	if d.Mode != "" {
		o = append(o, field{"mode", d.Mode})
	}
	if d.Per != "" {
		o = append(o, field{"per", d.Per})
	}
	return o.MarshalJSON()
}

// Path is the file's path: File, joined to the scenario file's directory
// when it is relative.
func (d *DataSource) Path() string {
	if !filepath.IsAbs(d.File) && d.dir != "" {
		return filepath.Join(d.dir, d.File)
	}
	return d.File
}

// Resolved is a copy of d whose File is its path made absolute (against
// the working directory when the plan has no scenario file), for a
// process that reads the plan without the scenario file beside it.
func (d *DataSource) Resolved() (*DataSource, error) {
	abs, err := filepath.Abs(d.Path())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.File, err)
	}
	return &DataSource{File: abs, Mode: d.Mode, Per: d.Per, line: d.line}, nil
}

// Table reads the file (once) and returns its rows.
func (d *DataSource) Table() (*userdata.Table, error) {
	d.once.Do(func() { d.tbl, d.err = userdata.ReadFile(d.Path()) })
	return d.tbl, d.err
}

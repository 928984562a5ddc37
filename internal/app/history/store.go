package history

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MarkerFile marks a directory as a leakbench history; it holds the format
// and the version the directory was created with.
const MarkerFile = ".leakbench-history"

// entryExt ends every entry's file name.
const entryExt = ".json"

// idLayout is the time part of an entry ID: fixed width, so that IDs sort
// by time as plain strings.
const idLayout = "20060102T150405.000000000Z"

// Store is a history directory.
type Store struct {
	dir string
	// now and random are time.Now and crypto/rand; tests replace them.
	now    func() time.Time
	random func([]byte) (int, error)
}

// Warning is an entry file the store skipped, and why.
type Warning struct {
	File   string
	Reason string
}

func (w Warning) String() string { return w.File + ": " + w.Reason + " (skipped)" }

// ErrNotFound means no entry has the ID asked for.
var ErrNotFound = errors.New("no such history entry")

// Open opens the history directory dir, creating it (and its marker) when
// it does not exist.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("history: no directory given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open history: %s is not a directory", dir)
	}
	// The marker is made once; whoever comes second finds it there.
	f, err := os.OpenFile(filepath.Join(dir, MarkerFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, werr := fmt.Fprintf(f, "{\"format\":%q,\"format_version\":%d}\n", Format, FormatVersion)
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("open history: write marker: %w", err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open history: %w", err)
	}
	return &Store{dir: dir, now: time.Now, random: rand.Read}, nil
}

// OpenExisting opens a history directory for reading, creating nothing.
func OpenExisting(dir string) (*Store, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open history: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open history: %s is not a directory", dir)
	}
	return &Store{dir: dir, now: time.Now, random: rand.Read}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// newID returns a fresh, time-sortable entry ID.
func (s *Store) newID() (string, error) {
	var r [6]byte
	if _, err := s.random(r[:]); err != nil {
		return "", fmt.Errorf("entry id: %w", err)
	}
	return s.now().UTC().Format(idLayout) + "-" + hex.EncodeToString(r[:]), nil
}

// ValidID reports whether id has the shape of an entry ID, so that a
// caller never makes a path from anything else.
func ValidID(id string) bool {
	t, r, ok := strings.Cut(id, "-")
	if !ok || len(r) != 12 || len(t) != len(idLayout) {
		return false
	}
	if _, err := hex.DecodeString(r); err != nil {
		return false
	}
	_, err := time.Parse(idLayout, t)
	return err == nil
}

// Append writes e as a new entry and returns its ID (also set in e.ID and
// e.Recorded). The entry is written to a temporary file and hard-linked to
// its final name, which fails instead of replacing an existing file: two
// writers never overwrite each other and a reader never sees a partial
// entry. On a file system without hard links the entry is created in place
// with O_EXCL.
func (s *Store) Append(e *Entry) (string, error) {
	e.Format, e.FormatVersion = Format, FormatVersion
	for range 10 {
		id, err := s.newID()
		if err != nil {
			return "", err
		}
		e.ID = id
		e.Recorded, _ = time.Parse(idLayout, strings.SplitN(id, "-", 2)[0])
		raw, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return "", fmt.Errorf("append to history: %w", err)
		}
		raw = append(raw, '\n')
		err = s.place(id, raw)
		if errors.Is(err, fs.ErrExist) {
			continue // the same nanosecond and random suffix: pick again
		}
		if err != nil {
			return "", fmt.Errorf("append to history: %w", err)
		}
		return id, nil
	}
	return "", errors.New("append to history: no free entry name after 10 tries")
}

func (s *Store) place(id string, raw []byte) error {
	final := filepath.Join(s.dir, id+entryExt)
	tmp := filepath.Join(s.dir, ".tmp-"+id)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	_, werr := f.Write(raw)
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	err = os.Link(tmp, final)
	var le *os.LinkError
	if err != nil && !errors.Is(err, fs.ErrExist) && errors.As(err, &le) && isNoLink(le.Err) {
		return writeExclusive(final, raw)
	}
	if err == nil {
		syncDir(s.dir)
	}
	return err
}

// writeExclusive creates path with O_EXCL and writes raw into it.
func writeExclusive(path string, raw []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(raw)
	if werr == nil {
		werr = f.Sync()
	}
	return errors.Join(werr, f.Close())
}

// syncDir makes a new name durable, where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// List reads every entry, oldest first (by ID). Files that are not
// entries — dot-files, other extensions, directories — are ignored; an
// entry that is corrupt or in another format version is skipped and named
// in the warnings. Only a directory that cannot be read is an error.
func (s *Store) List() ([]*Entry, []Warning, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read history: %w", err)
	}
	var entries []*Entry
	var warnings []Warning
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, entryExt) || de.IsDir() {
			continue
		}
		e, err := readEntry(filepath.Join(s.dir, name))
		if err != nil {
			warnings = append(warnings, Warning{File: name, Reason: err.Error()})
			continue
		}
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	return entries, warnings, nil
}

// readEntry reads one entry file; its name is its ID.
func readEntry(path string) (*Entry, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Format        string `json:"format"`
		FormatVersion int    `json:"format_version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch {
	case head.Format != Format:
		return nil, fmt.Errorf("not a %s entry (format %q)", Format, head.Format)
	case head.FormatVersion > FormatVersion:
		return nil, fmt.Errorf("format version %d is newer than this leakbench reads (%d); upgrade leakbench", head.FormatVersion, FormatVersion)
	case head.FormatVersion < FormatVersion:
		return nil, fmt.Errorf("format version %d is older than this leakbench reads (%d)", head.FormatVersion, FormatVersion)
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("version %d entry does not decode: %w", head.FormatVersion, err)
	}
	id := strings.TrimSuffix(filepath.Base(path), entryExt)
	if e.ID != id {
		return nil, fmt.Errorf("entry says id %q, its file name %q", e.ID, id)
	}
	return &e, nil
}

// Find returns the entry whose ID is id or, when no ID is exactly id, the
// only one that starts with it.
func Find(entries []*Entry, id string) (*Entry, error) {
	var match []*Entry
	for _, e := range entries {
		if e.ID == id {
			return e, nil
		}
		if id != "" && strings.HasPrefix(e.ID, id) {
			match = append(match, e)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	default:
		return nil, fmt.Errorf("%w: %q is the start of %d IDs (%s, %s, …); give more of it", ErrNotFound, id, len(match), match[0].ID, match[1].ID)
	}
}

// isNoLink: the file system has no hard links (EPERM on some FUSE and
// network mounts, ENOTSUP/EOPNOTSUPP elsewhere).
func isNoLink(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fs.ErrPermission)
}

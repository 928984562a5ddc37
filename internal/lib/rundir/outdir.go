package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MarkerFile is written into every output directory leakbench creates. Its
// presence is what lets --force clear the directory later: leakbench never
// removes a directory it did not make.
const MarkerFile = ".leakbench"

// ownFiles are the names leakbench writes at the top of an output
// directory (a run, a sign-off, a probe's, a comparison's or a trend's
// output).
var ownFiles = []string{
	MarkerFile, ConfigFile, SummaryFile, SamplesFile, EpisodesFile, LoadFile, LoadHistogramsFile, RequestsFile,
	HistogramsFile, SeriesFile,
	ReportFile, HTMLFile, JUnitFile, CompareFile, ProbeSummaryFile,
	BaselineReportFile, BaselineSummaryFile, BaselineJUnitFile,
	TrendHTMLFile, TrendMarkdownFile,
}

// ownDirs are the subdirectories leakbench writes without a marker of their
// own, with the file extensions they may hold.
var ownDirs = map[string][]string{
	PlotsDir: {".png", ".svg"},
	LogsDir:  {".log", ".txt"},
}

type marker struct {
	CreatedBy string    `json:"created_by"`
	Created   time.Time `json:"created"`
}

// Prepare makes dir ready for new output. A missing or empty dir is
// created and marked. A non-empty one is refused unless force; with force
// it is cleared only if leakbench made it (it holds the marker) and holds
// nothing but leakbench's own files — then exactly those are removed.
// Anything else present is named in the refusal and left untouched, so a
// mistyped --out (a home directory, a source tree) never loses a file.
func Prepare(dir string, force bool) error {
	if dir == "" {
		return errors.New("no output directory given (--out)")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read output directory %s: %w", dir, err)
	case len(entries) > 0 && !force:
		return fmt.Errorf("%s is not empty; choose a new --out directory or pass --force to replace the leakbench output in it", dir)
	case len(entries) > 0:
		if err := clear(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory %s: %w", dir, err)
	}
	return writeMarker(dir)
}

// clear removes leakbench's files from dir after checking that nothing
// else is there.
func clear(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); err != nil {
		return fmt.Errorf("%s was not created by leakbench (no %s marker in it); not removing anything even with --force — choose another --out or empty it yourself", dir, MarkerFile)
	}
	var remove, foreign []string
	if err := scan(dir, "", &remove, &foreign); err != nil {
		return err
	}
	if len(foreign) > 0 {
		shown := foreign
		if len(shown) > 8 {
			shown = append(slices.Clone(shown[:8]), fmt.Sprintf("… (%d more)", len(foreign)-8))
		}
		return fmt.Errorf("%s holds files leakbench did not write: %s; not removing anything even with --force — move them away or choose another --out",
			dir, strings.Join(shown, ", "))
	}
	// Deepest first, so that directories are empty when their turn comes.
	slices.Reverse(remove)
	for _, rel := range remove {
		if err := os.Remove(filepath.Join(dir, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear output directory %s: %w", dir, err)
		}
	}
	return nil
}

// scan sorts what lies in dir/rel into leakbench's own entries (remove, in
// the order found, a directory before its contents) and the rest
// (foreign).
func scan(dir, rel string, remove, foreign *[]string) error {
	entries, err := os.ReadDir(filepath.Join(dir, rel))
	if err != nil {
		return fmt.Errorf("read output directory %s: %w", filepath.Join(dir, rel), err)
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(rel, name)
		switch {
		case e.Type().IsRegular() && isOwnFile(name):
			*remove = append(*remove, path)
		case e.IsDir() && ownDirs[name] != nil:
			if err := scanPlain(dir, path, ownDirs[name], remove, foreign); err != nil {
				return err
			}
		case e.IsDir() && hasMarker(filepath.Join(dir, path)):
			// A nested run directory (a sign-off's before/ and after/).
			*remove = append(*remove, path)
			if err := scan(dir, path, remove, foreign); err != nil {
				return err
			}
		default:
			if e.IsDir() {
				path += string(filepath.Separator)
			}
			*foreign = append(*foreign, path)
		}
	}
	return nil
}

// scanPlain checks a subdirectory of leakbench's that holds only files
// with the given extensions.
func scanPlain(dir, rel string, exts []string, remove, foreign *[]string) error {
	*remove = append(*remove, rel)
	entries, err := os.ReadDir(filepath.Join(dir, rel))
	if err != nil {
		return fmt.Errorf("read output directory %s: %w", filepath.Join(dir, rel), err)
	}
	for _, e := range entries {
		path := filepath.Join(rel, e.Name())
		if e.Type().IsRegular() && slices.Contains(exts, filepath.Ext(e.Name())) {
			*remove = append(*remove, path)
			continue
		}
		if e.IsDir() {
			path += string(filepath.Separator)
		}
		*foreign = append(*foreign, path)
	}
	return nil
}

// isOwnFile: one of leakbench's file names, or the temporary file an
// atomic write of one leaves behind when it is killed (NAME.tmp…, .NAME…).
func isOwnFile(name string) bool {
	for _, own := range ownFiles {
		if name == own || strings.HasPrefix(name, own+".tmp") || strings.HasPrefix(name, "."+own) {
			return true
		}
	}
	return false
}

func hasMarker(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, MarkerFile))
	return err == nil && fi.Mode().IsRegular()
}

func writeMarker(dir string) error {
	raw, _ := json.Marshal(marker{CreatedBy: "leakbench", Created: time.Now().UTC()})
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("mark output directory %s: %w", dir, err)
	}
	return nil
}

// Discard removes an output directory that Prepare made and nothing has
// written into yet (it holds only the marker), so that a command that
// failed before producing anything leaves no empty result behind. A
// directory holding anything else is left as it is.
func Discard(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != MarkerFile {
		return
	}
	if os.Remove(filepath.Join(dir, MarkerFile)) == nil {
		_ = os.Remove(dir)
	}
}

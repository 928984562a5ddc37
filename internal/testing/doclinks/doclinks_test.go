package doclinks

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repo is the repository's root, seen from this package.
const repo = "../../.."

// pending are link targets that other branches of the same change add
// (generated references). Each may be missing until they are merged;
// once it exists it is checked like any other.
var pending = map[string]bool{
	"docs/reference/cli.md":      true,
	"docs/reference/scenario.md": true,
}

// link matches an inline Markdown link or image: [text](target "title").
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// inlineCode matches a code span, whose brackets are not links.
var inlineCode = regexp.MustCompile("`[^`]*`")

// docFiles are README.md and every Markdown file under docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk docs: %v", err)
	}
	return files
}

// ref is one relative link: where it stands and what it names.
type ref struct {
	file   string // repository-relative file holding the link
	line   int
	target string // as written
}

// links returns the relative links of a Markdown file, code blocks and
// code spans left out.
func links(t *testing.T, root, file string) []ref {
	t.Helper()
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		t.Fatalf("open %s: %v", file, err)
	}
	defer f.Close()
	var out []ref
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if u, err := url.Parse(target); err == nil && u.Scheme != "" {
				continue // http(s), mailto: not this test's business
			}
			out = append(out, ref{file: file, line: n, target: target})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, spaces to hyphens,
// punctuation other than hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown file's headings, duplicates
// numbered as GitHub numbers them (name, name-1, …).
func anchors(path string) (map[string]bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		s := slug(h)
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out, nil
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Trace context: which request left the session stuck": "trace-context-which-request-left-the-session-stuck",
		"Python: SQLAlchemy, psycopg2, psycopg 3":             "python-sqlalchemy-psycopg2-psycopg-3",
		"`run --baseline`: a regression gate":                 "run---baseline-a-regression-gate",
		"Exit codes":                                          "exit-codes",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRelativeLinksResolve fails on a relative link of the README or the
// docs whose file is missing, or whose #fragment names no heading.
func TestRelativeLinksResolve(t *testing.T) {
	files := docFiles(t, repo)
	if len(files) < 2 {
		t.Fatalf("found %d documentation files; the walk is broken", len(files))
	}
	checked, problems := check(t, repo, files)
	if checked == 0 {
		t.Fatal("no relative link found; the link pattern is broken")
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestBrokenLinksAreFound checks the checker on testdata/tree, whose
// README.md has one good link of each kind and one broken of each kind.
func TestBrokenLinksAreFound(t *testing.T) {
	root := filepath.Join("testdata", "tree")
	files := docFiles(t, root)
	checked, problems := check(t, root, files)
	if checked != 7 {
		t.Errorf("checked %d links, want 7", checked)
	}
	want := []string{
		`README.md:5: link "docs/missing.md": docs/missing.md does not exist`,
		`README.md:6: link "docs/guide.md#no-such-heading": docs/guide.md has no heading #no-such-heading`,
		`README.md:7: link "#nowhere": README.md has no heading #nowhere`,
		`docs/guide.md:3: link "../../outside.md" leaves the repository`,
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

// check returns how many relative links files hold under root, and one
// line for each that does not resolve.
func check(t *testing.T, root string, files []string) (checked int, problems []string) {
	t.Helper()
	for _, file := range files {
		for _, r := range links(t, root, file) {
			checked++
			path, frag, _ := strings.Cut(r.target, "#")
			target := file // a bare #fragment names a heading of this file
			if path != "" {
				p, err := url.PathUnescape(path)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q: %v", r.file, r.line, r.target, err))
					continue
				}
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), p))
			}
			if target == ".." || strings.HasPrefix(target, "../") {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q leaves the repository", r.file, r.line, r.target))
				continue
			}
			info, err := os.Stat(filepath.Join(root, target))
			if err != nil {
				if !pending[target] {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s does not exist", r.file, r.line, r.target, target))
				}
				continue
			}
			if frag == "" || info.IsDir() || !strings.HasSuffix(target, ".md") {
				continue
			}
			a, err := anchors(filepath.Join(root, target))
			if err != nil {
				t.Fatal(err)
			}
			if !a[frag] {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s has no heading #%s", r.file, r.line, r.target, target, frag))
			}
		}
	}
	return checked, problems
}

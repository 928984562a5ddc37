// Package refdoc reads the key tables of a Markdown reference (the
// scenario file's, docs/reference/scenario.md) for the tests that hold it
// complete: under each heading, a table whose rows start with a key in
// backticks ("| `timeout` | duration | ..."). It is for tests only.
//
//	keys, ok := refdoc.Listed(doc, "Step tools/call")
package refdoc

import "strings"

// Listed returns the keys of the table rows under the heading whose text
// is where (any level), up to the next heading; ok is false when there is
// no such heading. Lines inside ``` fences are not headings.
func Listed(doc []byte, where string) (keys []string, ok bool) {
	in, fenced := false, false
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(line, "#") {
			text := strings.TrimSpace(strings.TrimLeft(line, "#"))
			in = text == where
			ok = ok || in
			continue
		}
		if !in {
			continue
		}
		rest, found := strings.CutPrefix(line, "| `")
		if !found {
			continue
		}
		if key, _, found := strings.Cut(rest, "`"); found {
			keys = append(keys, key)
		}
	}
	return keys, ok
}

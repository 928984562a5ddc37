// Package format writes figures as every part of a report shows them, so
// that the tables, the checks and the plots' legends read alike.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Seconds writes a duration given in seconds: "250 ms" below a second,
// "1.5 s" from one; "n/a" for NaN or an infinity.
func Seconds(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v < 1:
		return fmt.Sprintf("%.0f ms", v*1000)
	default:
		return fmt.Sprintf("%.1f s", v)
	}
}

// Truncate cuts s to n bytes, marking the cut with an ellipsis.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// OrDash is s, or a dash when it is empty.
func OrDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// MDEscape makes text safe inside a Markdown table cell or inline code.
func MDEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "`", "'")
	return strings.Join(strings.Fields(s), " ")
}

// UpperFirst capitalises a line's first letter.
func UpperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Num writes a figure with three significant digits, whole numbers as
// they are.
func Num(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// Secs writes a duration given in seconds with three significant digits:
// "110 ms" below a second, "1.9 s" from one (Seconds rounds instead).
func Secs(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.3g ms", 1000*v)
	}
	return fmt.Sprintf("%.3g s", v)
}

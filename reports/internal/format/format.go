// Package format writes figures as every part of a report shows them, so
// that the tables, the checks and the plots' legends read alike.
package format

import (
	"fmt"
	"math"
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
